import type { Readable, Writable } from "node:stream";
import type { SpawnedChild } from "../spawn-engine/race-child.js";

/** SIGKILL `child` unless it already exited; a kill that throws (some platforms, for an exited process) is ignored. */
export function killNow(child: SpawnedChild): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
}

/** `ref` (a running execution keeps the host alive) or `unref` the child and its pipes. */
export function holdOpen(child: SpawnedChild, hold: boolean): void {
  const method = hold ? "ref" : "unref";
  child[method]?.();
  for (let fd = 0; fd < child.stdio.length; fd++) {
    const stream = child.stdio[fd] as (Readable | Writable) & { ref?: () => void; unref?: () => void };
    if (stream !== null && stream !== undefined) stream[method]?.();
  }
}
