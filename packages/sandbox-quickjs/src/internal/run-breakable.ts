import { createContext, Script } from "node:vm";

/** A context holding only the call to make: the script below calls it, so V8 can break into it. */
const holder = createContext(Object.create(null)) as { work?: (() => unknown) | undefined };
const call = new Script("work()", { filename: "suaveplan:quickjs-entry" });

/**
 * Run `work` (a synchronous call into the QuickJS module) under node:vm's
 * `breakOnSigint`: a SIGINT (Ctrl-C) while it runs — even a guest loop
 * inside the module, which holds this thread — makes V8 terminate it, and
 * this throws node's `ERR_SCRIPT_EXECUTION_INTERRUPTED` (see
 * {@link isSigintInterrupt}). While it runs, node detaches the process's
 * SIGINT listeners, so the signal only ends the run.
 */
export function runBreakable<T>(work: () => T): T {
  holder.work = work;
  try {
    return call.runInContext(holder, { breakOnSigint: true }) as T;
  } finally {
    holder.work = undefined;
  }
}

/** True for what {@link runBreakable} throws when a SIGINT ended the call. */
export function isSigintInterrupt(error: unknown): boolean {
  // Not `instanceof Error`: node may make it in another realm than this module's.
  return (
    typeof error === "object" &&
    error !== null &&
    (error as { code?: unknown }).code === "ERR_SCRIPT_EXECUTION_INTERRUPTED"
  );
}
