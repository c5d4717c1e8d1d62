/**
 * How long an isolate's teardown may still run after it was disposed, in ms.
 * isolated-vm tears a disposed isolate down on one of its own threads and
 * offers no signal when that is done (its author: "a couple hundred
 * milliseconds at most"). A natural exit waits for it (the teardown holds the
 * event loop), but `process.exit()` does not: the process's static
 * destructors then run beside the teardown, which crashed the host with
 * SIGSEGV in about one exit in three right after `destroy()` (isolated-vm
 * 5.0.4, Node 20; seen as the exit status 139 of a host whose work had all
 * succeeded).
 */
export const ISOLATE_TEARDOWN_MS = 250;

let lastDisposedAt: number | undefined;

/**
 * Note that an isolate was disposed (by us, or by isolated-vm's memory limit,
 * once we see it). The first call hooks `process.on("exit")`: an exit within
 * {@link ISOLATE_TEARDOWN_MS} of the last disposal first waits, synchronously,
 * for the rest of that time. Exits long after any disposal are not delayed.
 */
export function noteIsolateDisposed(): void {
  if (lastDisposedAt === undefined) process.on("exit", waitForTeardown);
  lastDisposedAt = performance.now();
}

function waitForTeardown(): void {
  if (lastDisposedAt === undefined) return;
  const left = lastDisposedAt + ISOLATE_TEARDOWN_MS - performance.now();
  // The only way to wait inside an 'exit' listener: the event loop no longer runs.
  if (left > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, left);
}
