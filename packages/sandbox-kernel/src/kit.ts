/**
 * Types shared by the parts of the kernel.
 *
 * Every `install*(kit)` part (`src/parts/`, `src/codec/`) runs INSIDE the guest realm (a
 * `node:vm` context, a worker's inner context, a child's context, an isolated-vm context, a
 * QuickJS context), bundled by the build into one script per profile (`src/profiles/`). So a
 * part imports only modules of this package and uses only ECMAScript built-ins of the realm
 * it runs in — no Node APIs. Each part captures the intrinsics it needs when it is installed,
 * before any guest code runs, and never calls a method looked up on a guest value afterwards.
 *
 * The codec and inspect parts are realm-neutral: the host runs the very same functions in its
 * own realm (`createHostCodec()`), so one implementation serves both sides of the boundary.
 */

/** Where a value that cannot cross was found, and what it was. */
export interface NotTransferableRecord {
  /** Always `"not-transferable"`: tells this record from a guest-thrown value. */
  readonly kind: "not-transferable";
  /** The path from the root, e.g. `result.items[3].fn`, `result.get("k")`, `args[0]`. */
  readonly path: string;
  /** What it is, e.g. `function`, `symbol`, `WeakMap`, `Promise`, `nested deeper than 1000 levels`, `larger than 1048576 bytes`. */
  readonly what: string;
}

/** A described error, as it crosses as JSON. */
export interface ErrorRecord {
  /** `TypeError`, `Error`, … ("Error" when the thrown value is not an error). */
  name: string;
  /** The message (for a non-error throw: its inspected text). */
  message: string;
  /** Guest-only stack text (`Name: message\n    at …` with sandbox frames only); "" when none. */
  stack: string;
  /** 1-based line of the innermost guest frame, when known. */
  line?: number;
  /** 1-based column of the innermost guest frame, when known. */
  column?: number;
  /** The registered source module whose evaluation threw, when it was one. */
  module?: string;
  /** True when nothing handled this rejected promise (the run fails as Node's default mode would). */
  unhandledRejection?: boolean;
}

/** Primitive-only bridge to the host driver. Never throws (the kernel still guards every call). */
export type KernelBridge = (op: string, a?: unknown, b?: unknown, c?: unknown) => unknown;

/** A position in guest code, as {@link KernelKit.callerPosition} finds it (V8's raw values). */
export interface CallerPosition {
  readonly file: unknown;
  readonly line: unknown;
  readonly column: unknown;
}

/** Static configuration handed to the kernel as JSON at boot. */
export interface KernelConfig {
  /** File name guest code is compiled under (`sandbox.js`). */
  guestFilename: string;
  /** Prefix of the file names of registered source modules (`sandbox-module:`). */
  moduleFilenamePrefix: string;
  /** Characters a realm puts before a source module's text on line 1 (subtracted from columns there). */
  moduleWrapperLength: number;
  /**
   * Stack frames as the plugin host writes them: no `async `/`new ` prefix, and an error whose
   * name is empty headed by its message alone. Default `false` (the engines' style).
   */
  plainFrames?: boolean;
  /** Pending timers allowed at once. */
  maxTimers: number;
  /** Timers allowed to be created in total. */
  maxTimerCreations: number;
  /**
   * 32 bytes from the host's CSPRNG as 64 hex characters, fresh for each realm:
   * the key of the guest's `crypto` keystream. The web-globals part deletes it
   * from the kit once it has read it.
   */
  entropy: string;
}

/** What the parts add to the kit, in install order. */
export interface KernelKit {
  bridge: KernelBridge;
  config: KernelConfig;

  // ---- codec (src/codec/install-codec.ts; realm-neutral) ----------------
  /**
   * Encode `value` as codec text (see the format in `install-codec.ts`).
   * Throws a frozen {@link NotTransferableRecord} (never an Error) when part of
   * the value cannot cross, or when the text would exceed `maxBytes` UTF-16
   * code units × 2. `root` names the value in paths (`result`, `args[0]`).
   */
  encode(value: unknown, root: string, maxBytes: number): string;
  /** Rebuild a value from codec text with this realm's constructors. Throws a TypeError on malformed text. */
  decode(text: string): unknown;
  /** Set by the host codec: Error values are encoded with an empty `stack` (host stacks never reach a guest). */
  withoutStacks?: boolean;
  /** True when `value` is a record thrown by `encode`. */
  isNotTransferable(value: unknown): value is NotTransferableRecord;

  // ---- inspect (src/parts/install-inspect.ts; realm-neutral) -----------
  /** `util.inspect(value)` with Node's defaults (depth 2, no colours), as close as the table in its test. */
  inspect(value: unknown): string;
  /**
   * `util.format(...args)`: `%s %d %i %f %j %o %O %c %%`, then the rest inspected (to `depth`,
   * default 2) and joined by spaces. Past about `maxChars` characters (default no bound) objects
   * and arrays stop listing entries (`... n more`) and a string is cut with `…`, so the text stays
   * near `maxChars` whatever the arguments hold.
   */
  format(args: readonly unknown[], depth?: number, maxChars?: number): string;

  // ---- errors (src/parts/install-errors.ts) ----------------------------
  /** Describe a thrown or rejected guest value; never throws. */
  describeError(value: unknown): ErrorRecord;
  /**
   * The realm's own `stack` text of an error object: a data property, or the
   * accessor V8 installs on errors (Node 22+); a getter the guest defined is
   * not run. `undefined` when there is none; never throws.
   */
  nativeStackOf(error: object): string | undefined;
  /**
   * The engine formats `stack` when an error is made (QuickJS), not when it
   * is first read (V8): an error whose name or message is set after `super()`
   * must capture its stack again.
   */
  stacksAtConstruction: boolean;
  /**
   * Where the function that called `callee` is in guest code: the file, line and column V8
   * reports for the call (`null` when there is none, or on an engine without
   * `Error.captureStackTrace`). The plugin host reads its source there to tell `eval(…)` from an
   * indirect call.
   */
  callerPosition(callee: (...args: never[]) => unknown): CallerPosition | null;

  // ---- the rest, added by the remaining parts ---------------------------
  /** Define a global of the guest realm (non-enumerable, writable, configurable). */
  defineGlobal(name: string, value: unknown): void;
  /** Report the outcome to the host once; later reports are ignored, except that an error wins over a value. */
  report(kind: "value" | "error" | "untransferable", payload: string): void;
  /** Report a guest error (describes `value`). */
  reportError(value: unknown): void;
  /** Entries the host may call, by name. Filled in by the parts, frozen at the end. */
  entries: Record<string, (...args: never[]) => unknown>;
}
