import type { Readable, Writable } from "node:stream";
import type { SpawnedChild } from "../spawn-engine/race-child.js";
import { descendantsOf, type SeenProcesses, startTimeOf } from "./child-memory.js";

/** The processes once seen below each child (see {@link treeOf}). */
const trees = new WeakMap<SpawnedChild, SeenProcesses>();

/**
 * The record of processes seen below `child`, made on first use: whoever
 * walks the child's tree (the memory sampler of a confined child) adds to it,
 * and {@link killNow} kills what it holds even once they left the tree.
 */
export function treeOf(child: SpawnedChild): SeenProcesses {
  let seen = trees.get(child);
  if (seen === undefined) {
    seen = new Map();
    trees.set(child, seen);
  }
  return seen;
}

/**
 * SIGKILL `child` (unless it already exited) and, on Linux, every process
 * below it now or once seen below it ({@link treeOf}) that is still the same
 * process; a kill that throws (some platforms, for an exited process) is
 * ignored. A confined child is a tree — bwrap, the launcher, node — and
 * bwrap's own init inside the PID namespace does not always follow its
 * parent (it kept the stdio pipes open, so the child never closed); once the
 * outer process is gone, what is left was reparented and only the record finds it.
 */
export function killNow(child: SpawnedChild): void {
  const exited = child.exitCode !== null || child.signalCode !== null;
  const below = exited || child.pid === undefined ? [] : descendantsOf(child.pid);
  if (!exited) signal(() => child.kill("SIGKILL"));
  for (const pid of below) signal(() => process.kill(pid, "SIGKILL"));
  for (const [pid, started] of trees.get(child) ?? []) {
    if (!below.includes(pid) && startTimeOf(pid) === started) signal(() => process.kill(pid, "SIGKILL"));
  }
}

function signal(send: () => unknown): void {
  try {
    send();
  } catch {
    // Already gone.
  }
}

/** How long {@link closeWithin} waits for a killed child to close by itself, in ms. */
export const CLOSE_GRACE_MS = 2000;

/**
 * Wait until `closed` (the child exited and its pipes closed), at most
 * `graceMs`. Past it something outside the child's tree still holds the
 * pipes: kill what {@link killNow} can find once more, destroy the host's
 * ends of the pipes (so the child closes and nothing of it stays open in the
 * host), and wait at most `graceMs` again. Never waits forever.
 */
export async function closeWithin(
  child: SpawnedChild,
  closed: Promise<void>,
  graceMs = CLOSE_GRACE_MS,
): Promise<void> {
  if (await settlesWithin(closed, graceMs)) return;
  killNow(child);
  for (let fd = 0; fd < child.stdio.length; fd++) child.stdio[fd]?.destroy();
  await settlesWithin(closed, graceMs);
}

async function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, ms, false);
  });
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
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
