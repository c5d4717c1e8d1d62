import { DEMAND_WINDOW_MS, SparePool } from "@suaveplan/sandbox-core/spares";
import { MIN_WORKER_MEMORY_BYTES } from "./resource-limits.js";
import { startWorkerThread, type ThreadListener, type WorkerThread } from "./worker-thread.js";

/** How long after a spare is taken the next one starts booting, unless the run ends first, in ms. */
export const REFILL_DELAY_MS = 20;

/**
 * Hands out fresh, single-use worker threads and keeps booted spares in the
 * background, so a call does not pay the worker's cold start. How many
 * follows demand ({@link SpareDemand}): as many as the most runs in flight at
 * once lately, between one and `maxSpares`, booted one after another (never
 * several at once, which would take the cores from the runs they are for),
 * and retired again when the bursts stop. Spares are `unref()`ed (an idle
 * engine never keeps the process alive) and only serve calls whose heap
 * budget matches the one they were started with.
 */
export class WorkerSupply {
  /** Ready spares and at most one still booting, oldest first. */
  private readonly pool: SparePool<WorkerThread>;
  private closed = false;
  private readonly exiting = new Set<Promise<unknown>>();

  /**
   * @param spareMemoryLimit - Heap budget of the spares, in bytes (the engine's `memoryLimit`).
   * @param maxSpares - Spares kept at most (0: none, as with the reuse tier, which keeps its own warm workers).
   * @param windowMs - How long a burst is remembered (tests shorten it).
   */
  constructor(
    private readonly spareMemoryLimit: number,
    maxSpares: number,
    windowMs = DEMAND_WINDOW_MS,
  ) {
    this.pool = new SparePool<WorkerThread>(
      {
        start: () => this.startSpare(),
        retire: (spare) => this.retire(spare),
        alive: (spare) => !spare.exited,
        booting: (spare) => !spare.ready,
      },
      { maxSpares: spareMemoryLimit < MIN_WORKER_MEMORY_BYTES ? 0 : maxSpares, windowMs },
    );
    this.pool.refillAfter(0);
  }

  /** Spares now: how many, and how many of them have booted (for tests). */
  get spareCounts(): { spares: number; ready: number } {
    const spares = this.pool.list;
    return { spares: spares.length, ready: spares.filter((spare) => spare.ready).length };
  }

  /** How many of the spares now run (or ran) the warm-up request before their `ready` (for tests). */
  get warmedSpares(): number {
    return this.pool.list.filter((spare) => spare.warmUp).length;
  }

  /**
   * A ready spare when one has this budget, else one still booting, else a
   * new worker. The next spare starts booting {@link REFILL_DELAY_MS} later,
   * or at once when the engine calls {@link finished} as the run ends: a
   * worker's boot takes a core for tens of milliseconds, and on a short run it
   * would compete with the run it is meant to follow. Every `take` is paired
   * with one {@link finished}.
   * @throws when a worker cannot be started.
   */
  take(memoryLimit: number): WorkerThread {
    let thread = this.pool.take(
      (spare) => spare.memoryLimit === memoryLimit,
      (spare) => spare.ready,
    );
    if (thread !== undefined) {
      thread.listener = undefined;
      thread.worker.ref();
    } else {
      // For this caller, now: no warm-up run first.
      thread = this.start(memoryLimit, undefined, false);
    }
    this.pool.started();
    this.pool.refillAfter(REFILL_DELAY_MS);
    return thread;
  }

  /** A run that {@link take} served ended: boot the next spare now if demand wants one. */
  finished(): void {
    this.pool.ended();
    this.pool.refillAfter(0);
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

  /** Stop making spares, terminate the spares and wait until every retired worker has exited. */
  async close(): Promise<void> {
    this.closed = true;
    for (const spare of this.pool.close()) this.retire(spare);
    while (this.exiting.size > 0) await Promise.allSettled([...this.exiting]);
  }

  /** Start a worker of this heap budget; `onExit` runs when it exits; `warmUp` as `startWorkerThread`'s. */
  start(memoryLimit: number, onExit?: (thread: WorkerThread) => void, warmUp = true): WorkerThread {
    return startWorkerThread(
      memoryLimit,
      (thread) => {
        this.pool.drop(thread);
        onExit?.(thread);
      },
      undefined,
      warmUp,
    );
  }

  /** Boot a spare for the pool; none after {@link close} or when a worker cannot be started. */
  private startSpare(): WorkerThread | undefined {
    if (this.closed) return undefined;
    try {
      // With several runs in flight a spare is likely taken before its warm-up ends, and the
      // warm-up's CPU comes out of those runs (measured, 8 callers: ~10 % fewer calls/s): only an
      // engine serving one run at most warms its spares.
      const spare = this.start(this.spareMemoryLimit, undefined, this.pool.running <= 1);
      spare.worker.unref();
      spare.listener = this.spareListener;
      return spare;
    } catch {
      // No spare then; the next call starts its own worker and reports why.
      return undefined;
    }
  }

  /** What hears a spare until a run takes it: its `ready` boots the next one, if wanted. */
  private readonly spareListener: ThreadListener = {
    onReady: () => this.pool.refillAfter(0),
    onEvent: () => undefined,
    onError: () => undefined,
    onExit: () => undefined,
  };
}
