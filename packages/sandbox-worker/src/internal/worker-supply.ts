import { MIN_WORKER_MEMORY_BYTES } from "./resource-limits.js";
import { startWorkerThread, type WorkerThread } from "./worker-thread.js";

/** How long after a spare is taken the next one starts booting, unless the run ends first, in ms. */
export const REFILL_DELAY_MS = 20;

/**
 * Hands out fresh, single-use worker threads and keeps one booted spare in
 * the background, so a call does not pay the worker's cold start. The spare
 * is `unref()`ed (an idle engine never keeps the process alive) and only
 * serves calls whose heap budget matches the one it was started with.
 */
export class WorkerSupply {
  private spare: WorkerThread | undefined;
  private refill: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly exiting = new Set<Promise<unknown>>();

  /**
   * @param spareMemoryLimit - Heap budget of the spare, in bytes (the engine's `memoryLimit`).
   * @param keepSpare - Keep a booted spare (default true; false when the reuse tier keeps the warm workers).
   */
  constructor(
    private readonly spareMemoryLimit: number,
    private readonly keepSpare = true,
  ) {
    this.refillSoon();
  }

  /**
   * The spare when its budget matches, else a new worker. The next spare
   * starts booting {@link REFILL_DELAY_MS} later, or at once when the engine
   * calls {@link refillSoon} as the run ends: a worker's boot takes a core
   * for about a millisecond, and on a short run it would compete with the
   * run it is meant to follow.
   * @throws when a worker cannot be started.
   */
  take(memoryLimit: number): WorkerThread {
    const spare = this.spare;
    let thread: WorkerThread;
    if (spare !== undefined && !spare.exited && spare.memoryLimit === memoryLimit) {
      this.spare = undefined;
      spare.worker.ref();
      thread = spare;
    } else {
      // For this caller, now: no warm-up run first.
      thread = this.start(memoryLimit, undefined, false);
    }
    this.refillAfter(REFILL_DELAY_MS);
    return thread;
  }

  /**
   * Terminate a worker (idempotent) and track it until it has exited; with
   * `later`, in the next macrotask (after the caller has its result).
   */
  retire(thread: WorkerThread, later = false): void {
    thread.listener = undefined;
    if (thread.exited) return;
    const terminate = () => thread.worker.terminate().catch(() => undefined);
    const exited = later ? new Promise((resolve) => setImmediate(resolve)).then(terminate) : terminate();
    this.exiting.add(exited);
    void exited.finally(() => this.exiting.delete(exited));
  }

  /** Stop making spares, terminate the spare and wait until every retired worker has exited. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refill !== undefined) clearTimeout(this.refill);
    this.refill = undefined;
    if (this.spare !== undefined) this.retire(this.spare);
    this.spare = undefined;
    while (this.exiting.size > 0) await Promise.allSettled([...this.exiting]);
  }

  /** Start a worker of this heap budget; `onExit` runs when it exits; `warmUp` as `startWorkerThread`'s. */
  start(memoryLimit: number, onExit?: (thread: WorkerThread) => void, warmUp = true): WorkerThread {
    return startWorkerThread(
      memoryLimit,
      (thread) => {
        if (this.spare === thread) this.spare = undefined;
        onExit?.(thread);
      },
      undefined,
      warmUp,
    );
  }

  /** Boot the next spare soon (in a macrotask), off the current call's path; no-op while one exists. */
  refillSoon(): void {
    this.refillAfter(0);
  }

  private refillAfter(delayMs: number): void {
    if (
      !this.keepSpare ||
      this.closed ||
      this.spare !== undefined ||
      this.spareMemoryLimit < MIN_WORKER_MEMORY_BYTES
    )
      return;
    if (this.refill !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.refill);
    }
    this.refill = setTimeout(() => {
      this.refill = undefined;
      if (this.closed || this.spare !== undefined) return;
      try {
        const spare = this.start(this.spareMemoryLimit);
        spare.worker.unref();
        this.spare = spare;
      } catch {
        // No spare then; the next call starts its own worker and reports why.
      }
    }, delayMs);
    this.refill.unref();
  }
}
