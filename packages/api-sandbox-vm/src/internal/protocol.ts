// Messages between the main-thread handle and the vm worker. Payloads are membrane codec strings.
import type { SandVmCode } from "../errors/sand-vm-codes.js";

/** `workerData` of the vm worker. */
export interface WorkerInit {
  /** Absolute path of the plugin's entry module. */
  pluginModulePath: string;
  /** Per-drain CPU budget and module-evaluation timeout, ms. */
  timeoutMs: number;
  /** Capability globals to install (`"fs"`, `"fetch"`). */
  capabilities: string[];
  /** Host tool names (members of the guest's frozen `tools` global). */
  tools: string[];
  /** `memoryLimitMb` in bytes: the heap is capped by resourceLimits, heap + off-heap growth is checked after each drain. */
  memoryLimitBytes: number;
  /** Largest result payload of one call, in bytes (codec text × 2); null: no limit. */
  maxOutputBytes: number | null;
  /** V8's code cache of the kernel's plugin script, made on the main thread (see `plugin-script.ts`). */
  kernelCache: Uint8Array;
}

/** A host-side failure described as data. */
export interface WireError {
  code: SandVmCode;
  message: string;
  details?: Record<string, unknown>;
}

/** Main → worker. */
export type ToWorker =
  | { t: "call"; id: number; name: string; payload: string }
  | { t: "forget"; id: number }
  /** A call's timer ran out: answer `probe` once the worker is free (its drain ended). */
  | { t: "probe"; id: number }
  | { t: "cap.result"; id: number; ok: boolean; payload: string };

/** Worker → main. */
export type FromWorker =
  | { t: "started" }
  | { t: "ready"; payload: string }
  | { t: "load-failed"; error: WireError }
  /** `raised`: the sandbox itself raised the thrown error (its `code` is the sandbox's). */
  | { t: "load-threw"; raised: boolean; payload: string }
  | { t: "result"; id: number; ok: boolean; raised: boolean; payload: string }
  /** The call's result was larger than `maxOutputBytes` (`bytes` of codec text × 2) and was not sent. */
  | { t: "result-too-large"; id: number; bytes: number }
  | { t: "cap"; id: number; op: string; payload: string }
  | { t: "log"; level: string; payload: string }
  /**
   * A drain of the context's microtask queue ended normally. `cause` is the call whose message
   * started it (null for other drains); results posted during the drain are final only now.
   */
  | { t: "drained"; cause: number | null }
  | { t: "probe"; id: number }
  /** The sandbox cannot go on; `cause` is the call whose drain failed, when one did. */
  | { t: "fatal"; error: WireError; cause: number | null };
