import { startWorkerThread, type WorkerThread } from "./worker-thread.js";

/**
 * Hands out fresh, single-use worker threads and keeps one booted spare in
 * the background, so a call does not pay the worker's cold start. The spare
 * is `unref()`ed (an idle engine never keeps the process alive) and only
 * serves calls whose heap budget matches the one it was started with.
 */
export class WorkerSupply {
  private spare: WorkerThread | undefined;
  private refill: NodeJS.Immediate | undefined;
  private closed = false;
  private readonly exiting = new Set<Promise<unknown>>();

  /** @param spareMemoryLimit - Heap budget of the spare, in bytes (the engine's `memoryLimit`). */
  constructor(private readonly spareMemoryLimit: number) {
    this.scheduleRefill();
  }

  /**
   * The spare when its budget matches, else a new worker; either way a new
   * spare starts booting soon.
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
      thread = this.start(memoryLimit);
    }
    this.scheduleRefill();
    return thread;
  }

  /** Terminate a worker (idempotent) and track it until it has exited. */
  retire(thread: WorkerThread): void {
    thread.listener = undefined;
    if (thread.exited) return;
    const exited = thread.worker.terminate().catch(() => undefined);
    this.exiting.add(exited);
    void exited.finally(() => this.exiting.delete(exited));
  }

  /** Stop making spares, terminate the spare and wait until every retired worker has exited. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.refill !== undefined) clearImmediate(this.refill);
    this.refill = undefined;
    if (this.spare !== undefined) this.retire(this.spare);
    this.spare = undefined;
    while (this.exiting.size > 0) await Promise.allSettled([...this.exiting]);
  }

  private start(memoryLimit: number): WorkerThread {
    return startWorkerThread(memoryLimit, (thread) => {
      if (this.spare === thread) this.spare = undefined;
    });
  }

  /** Boot the next spare soon, off the current call's path. */
  private scheduleRefill(): void {
    if (this.closed || this.spare !== undefined || this.refill !== undefined) return;
    this.refill = setImmediate(() => {
      this.refill = undefined;
      if (this.closed || this.spare !== undefined) return;
      try {
        const spare = this.start(this.spareMemoryLimit);
        spare.worker.unref();
        this.spare = spare;
      } catch {
        // No spare then; the next call starts its own worker and reports why.
      }
    });
    this.refill.unref();
  }
}
