/**
 * The message protocol between the host (`WorkerEngine`) and the worker entry
 * (`worker-entry.ts`). Internal: never exported from the package.
 *
 * Host → worker: one {@link RunRequest} per worker (workers are single-use).
 * Worker → host: `ready` once booted, `started` just before guest code is
 * compiled (the timeout starts here), any number of `log` lines, then one
 * `done`.
 */

/** Console levels, by index, as they cross the channel. */
export const LOG_LEVELS = ["log", "info", "warn", "error", "debug"] as const;

/** A registered module as it crosses to the worker (already validated and copied). */
export type WireModule = { name: string; exports: unknown } | { name: string; source: string };

/** Host → worker: run this code once. */
export interface RunRequest {
  type: "run";
  code: string;
  /** Globals to copy into the guest context (structured-cloned plain data). */
  context: Record<string, unknown>;
  modules: WireModule[];
  /** Guest-side output budget, in bytes (the host applies the exact cut). */
  maxOutputSize: number;
}

/** Why the worker says an execution failed. */
export type FailureKind =
  /** The guest threw, rejected, or failed to compile. */
  | "guest"
  /** A registered module failed to load. */
  | "module"
  /** The completion value cannot cross (function, symbol, cyclic …). */
  | "untransferable"
  /** A context value could not be copied in. */
  | "context";

/** Worker → host messages. */
export type WorkerMessage =
  | { type: "ready" }
  | { type: "started" }
  | { type: "log"; level: number; message: string }
  | { type: "done"; ok: true; value: unknown; memoryUsed: number }
  | { type: "done"; ok: false; kind: FailureKind; error: string; memoryUsed: number };

/**
 * The in-context helper object the worker drives. It lives in the guest
 * realm; every method returns primitives or guest-realm plain data.
 */
export interface GuestKernel {
  /** Copy worker-realm data into the guest realm and define it as a global. Returns an error text or "". */
  defineGlobal(name: string, value: unknown): string;
  /** Run a compiled module factory `(module, exports)` and define its exports as a global. Returns an error text or "". */
  defineModule(name: string, factory: unknown): string;
  /** Wait for `value` (a promise or thenable is awaited); calls the `settled` bridge once decided. */
  track(value: unknown): void;
  /**
   * The decided outcome, copied out as transferable plain data; a copy that
   * would cost the host more than `maxResultBytes` (bytes) is refused.
   */
  outcome(maxResultBytes?: number): KernelOutcome;
  /** A one-line description of a thrown guest value (never a stack). */
  describe(value: unknown): string;
  /** Run the callback of guest timer `id`; returns an uncaught error text or "". */
  fire(id: number): string;
  /** Forget every guest timer callback. */
  cancelAll(): void;
}

/** What {@link GuestKernel.outcome} returns. */
export type KernelOutcome =
  | { ok: true; value: unknown }
  | { ok: false; untransferable: boolean; error: string }
  | { ok: false; pending: true };
