import type { CallerPosition, ErrorRecord, NotTransferableRecord } from "../kit.js";
import type { GuestHostApi } from "./guest-host-api.js";

/**
 * Types shared by the parts of the `plugin` profile: the guest runtime of the plugin host
 * (`@suaveplan/api-sandbox-vm`). They run INSIDE its vm context, bundled into one script
 * (`@suaveplan/sandbox-kernel/sources/plugin`): each part uses only its `kit` and the ECMAScript
 * globals of the guest realm. Nothing here runs in the host realm.
 *
 * They still keep to what stitching them with `Function.prototype.toString` required (each part
 * one self-contained function): they came from the plugin host that way, and move onto the
 * shared parts (codec, inspect, console, calls) one at a time.
 */

/** Primitive-only channel to the host. Returns a JSON string `[ok, payload]` (or `undefined`). */
export type GuestBridge = (
  op: string,
  a?: string | number | boolean,
  b?: string | number | boolean,
) => unknown;

/** Shape of a coded error as it crosses the membrane. */
export interface CrossingError {
  code: string;
  message: string;
  name?: string;
}

/** A failed host-tool call as it crosses the membrane: becomes a guest `ToolError`. */
export interface ToolCrossingError {
  name: "ToolError";
  tool: string;
  message: string;
  /** Only for a refusal by the sandbox itself (`PERMISSION_DENIED`, `SAND_VM_DISPOSED`). */
  code?: string;
}

/** Static configuration handed to the bootstrap as JSON. */
export interface GuestConfig {
  /** Capability globals to install: `"fs"`, `"fetch"`. */
  capabilities: string[];
  /**
   * What the kernel's errors part reads (`installErrors`): `moduleFilenamePrefix` is the
   * identifier prefix of plugin modules (`sandbox:/plugin/`), the only frames stacks show;
   * `guestFilename` is the same prefix (the plugin has no main script); `moduleWrapperLength` is 0;
   * `plainFrames` is `true` (no `async `/`new ` prefixes; an error named "" is headed by its message).
   */
  guestFilename: string;
  moduleFilenamePrefix: string;
  moduleWrapperLength: number;
  plainFrames: boolean;
  /** Host tool names: members of the frozen `tools` global (installed when non-empty). */
  tools: string[];
  /**
   * The most bytes (UTF-16 code units × 2) the codec writes for one value: half of
   * `memoryLimitMb`, so that a copy is refused before it is built rather than by V8's
   * fatal out-of-memory on one huge string (nodejs/node#47224).
   */
  maxPayloadBytes: number;
}

/** Members the parts add to the kit, in install order. */
export interface GuestKit {
  bridge: GuestBridge;
  config: GuestConfig;
  /** Call the host; throws a guest error for a host-side failure, never a host object. */
  call(op: string, a?: string | number | boolean, b?: string | number | boolean): unknown;
  // guest-errors
  makeError(code: string, message: string, name?: string): Error;
  isSandboxRaised(value: unknown): boolean;
  /** A guest `ToolError` (`name`, `tool`, `message`; `code` only for a sandbox refusal). */
  makeToolError(tool: string, message: string, code?: string): Error;
  // the kernel's codec (installCodec)
  encode(value: unknown, root: string, maxBytes: number): string;
  decode(text: string): unknown;
  isNotTransferable(value: unknown): value is NotTransferableRecord;
  // guest-codec
  /** The text of a value leaving the plugin; throws a guest `DataCloneError` when it cannot cross. */
  copyOut(value: unknown, root: string): string;
  /** The text of a thrown value, which always crosses; `raised` when the sandbox itself raised it. */
  thrownOut(value: unknown): { text: string; raised: boolean };
  toBase64(bytes: Uint8Array): string;
  fromBase64(text: string): Uint8Array;
  toBytes(value: unknown, what: string): Uint8Array;
  // the kernel's inspect part
  inspect(value: unknown): string;
  format(args: readonly unknown[], depth?: number, maxChars?: number): string;
  // guest-text
  utf8Encode(text: string): Uint8Array;
  utf8Decode(bytes: Uint8Array): string;
  // the kernel's errors part
  describeError(value: unknown): ErrorRecord;
  callerPosition(callee: (...args: never[]) => unknown): CallerPosition | null;
  // guest-dynamic-code
  registerSource(identifier: string, source: string): void;
  /** Globals to install on the frozen global object, by name. */
  globals: Record<string, unknown>;
  /** Extra objects (not reachable from globals) to deep-freeze. */
  hidden: unknown[];
  // guest-capabilities
  settle(id: number, ok: boolean, payload: string): void;
  // guest-host-api: what `install` returns to the host
  entries: GuestHostApi;
}

/**
 * GUEST REALM. The first part of the `plugin` profile: the kit members the other parts fill
 * (the kernel's `install` has set `bridge` and `config`).
 */
export function installGuestKit(kit: GuestKit): void {
  kit.globals = {};
  kit.hidden = [];
}
