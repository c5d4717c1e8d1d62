import type { Readable, Writable } from "node:stream";
import type { SpawnedChild } from "../spawn-engine/race-child.js";
import { descendantsOf } from "./child-memory.js";

/**
 * SIGKILL `child` and, on Linux, every process below it, unless it already
 * exited; a kill that throws (some platforms, for an exited process) is
 * ignored. A confined child is a tree — bwrap, the launcher, node — and
 * bwrap's own init inside the PID namespace does not always follow its
 * parent (it kept the stdio pipes open, so the child never closed).
 */
export function killNow(child: SpawnedChild): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const below = child.pid === undefined ? [] : descendantsOf(child.pid);
  try {
    child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
  for (const pid of below) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
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
