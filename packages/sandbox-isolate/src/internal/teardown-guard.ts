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

/** The part of an isolate the guard needs. */
interface Disposable {
  readonly isDisposed: boolean;
  dispose(): void;
}

let lastDisposedAt: number | undefined;
let hooked = false;
/** Isolates created in this process and not yet disposed by us. */
const live = new Set<Disposable>();

/**
 * Note an isolate this process created. An isolate still live when the
 * process exits is disposed by the exit hook (see {@link noteIsolateDisposed}):
 * `process.exit()` while a guest loop ran otherwise blocked the exit until
 * the run's timeout ended the loop, and then crashed with SIGSEGV (the static
 * destructors beside the isolate's thread; isolated-vm 5.0.4, Node 20).
 */
export function noteIsolateCreated(isolate: Disposable): void {
  hook();
  live.add(isolate);
}

/**
 * Note that an isolate was disposed (by us, or by isolated-vm's memory limit,
 * once we see it). The first call hooks `process.on("exit")`: an exit within
 * {@link ISOLATE_TEARDOWN_MS} of the last disposal first waits, synchronously,
 * for the rest of that time. Exits long after any disposal are not delayed.
 */
export function noteIsolateDisposed(isolate?: Disposable): void {
  hook();
  if (isolate !== undefined) live.delete(isolate);
  lastDisposedAt = performance.now();
}

function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", disposeAndWait);
}

/** The exit hook: dispose what still lives (stopping any running guest code), then wait out the teardowns. */
function disposeAndWait(): void {
  for (const isolate of live) {
    try {
      if (!isolate.isDisposed) isolate.dispose();
    } catch {
      // Disposed meanwhile by its memory limit.
    }
    lastDisposedAt = performance.now();
  }
  live.clear();
  if (lastDisposedAt === undefined) return;
  const left = lastDisposedAt + ISOLATE_TEARDOWN_MS - performance.now();
  // The only way to wait inside an 'exit' listener: the event loop no longer runs.
  if (left > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, left);
}
