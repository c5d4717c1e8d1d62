import type { GuestOutcome } from "@suaveplan/sandbox-guest";
import { endedByGuest } from "./guest-ending.js";
import type { WorkerThread } from "./worker-thread.js";

/** Settings of the reuse tier (see `WorkerEngineOptions.reuse`), checked. */
export interface ReuseSettings {
  /** Workers kept at most; a call beyond them waits for one to come back. */
  readonly workers: number;
  /** Runs one worker serves before it is replaced by a new one. */
  readonly runsPerWorker: number;
}

/**
 * Whether a worker whose run ended with `outcome` may serve another one: only
 * after the guest's own ending ({@link endedByGuest}), reported by the worker
 * itself. A timeout, a memory limit, a cancel, a fault or a worker that did
 * not report retires it: its heap or its thread may be in a state the next run
 * must not inherit.
 */
export function mayReuse(reported: boolean, outcome: GuestOutcome): boolean {
  return reported && endedByGuest(outcome);
}

/**
 * The reuse tier's workers: at most `workers` long-lived threads of one heap
 * budget, each serving runs one at a time (every run in a fresh `node:vm`
 * context inside it) until it has served `runsPerWorker` or a run ended in a
 * way {@link mayReuse} refuses; then it is retired and a new one takes its
 * place at once, off any caller's path. Workers start on demand (one ahead,
 * with {@link warm}); an idle worker is
 * `unref()`ed (an idle engine never keeps the process alive) and stays until
 * {@link close}. A call while every worker is busy waits in line (first come,
 * first served).
 */
export class WorkerPool {
  private readonly idle: WorkerThread[] = [];
  private readonly all = new Set<WorkerThread>();
  private readonly waiting: ((thread: WorkerThread | undefined) => void)[] = [];
  private closed = false;

  /**
   * @param memoryLimit - Heap budget of every worker, in bytes.
   * @param start - Starts a worker of that budget; `onExit` runs when it exits; `warmUp` false for a caller already waiting.
   * @param retire - Terminates a worker (the engine tracks it until it has exited).
   */
  constructor(
    readonly memoryLimit: number,
    private readonly settings: ReuseSettings,
    private readonly start: (
      memoryLimit: number,
      onExit: (thread: WorkerThread) => void,
      warmUp: boolean,
    ) => WorkerThread,
    private readonly retire: (thread: WorkerThread, later: boolean) => void,
  ) {}

  /** Start one idle worker when none is alive, so the first call does not pay a cold start. */
  warm(): void {
    if (this.all.size === 0) this.warmOne();
  }

  private warmOne(): void {
    if (this.closed || this.all.size >= this.settings.workers) return;
    try {
      const thread = this.add(true);
      thread.worker.unref();
      this.idle.push(thread);
    } catch {
      // Then the first call starts one, and reports why it cannot.
    }
  }

  /** Workers alive now (idle and busy). */
  get size(): number {
    return this.all.size;
  }

  /**
   * A worker for one run: an idle one, a new one while fewer than `workers`
   * are alive, or the next one released. Resolves `undefined` once the pool
   * is closed. `signal` takes a waiting call out of line (then `undefined`).
   * @throws when a new worker cannot be started.
   */
  acquire(signal?: AbortSignal): Promise<WorkerThread | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    const idle = this.idle.pop();
    if (idle !== undefined) {
      idle.worker.ref();
      return Promise.resolve(idle);
    }
    if (this.all.size < this.settings.workers) return Promise.resolve(this.add(false));
    return new Promise((resolve) => {
      const served = (thread: WorkerThread | undefined) => {
        signal?.removeEventListener("abort", onAbort);
        resolve(thread);
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(served);
        if (at >= 0) this.waiting.splice(at, 1);
        resolve(undefined);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(served);
    });
  }

  /**
   * Give a worker back after its run ended with `outcome` (`reported`: the
   * worker sent its own `done`). It serves the next caller in line or goes
   * idle, unless it has to be retired; a retired worker's place is filled for
   * a caller in line.
   */
  release(thread: WorkerThread, reported: boolean, outcome: GuestOutcome): void {
    thread.listener = undefined;
    const keep =
      !this.closed &&
      !thread.exited &&
      mayReuse(reported, outcome) &&
      thread.runs < this.settings.runsPerWorker;
    if (!keep) {
      this.all.delete(thread);
      this.retire(thread, reported);
      // Its place is filled now, off any caller's path: demand made the pool this size.
      if (this.waiting.length > 0) this.serveWaiting();
      else if (!this.closed) this.warmOne();
      return;
    }
    this.putBack(thread);
  }

  /** Give back a worker that was acquired but given no run (its caller was cancelled meanwhile). */
  putBack(thread: WorkerThread): void {
    if (this.closed || thread.exited) {
      this.release(thread, false, { kind: "cancelled" });
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) {
      next(thread);
      return;
    }
    thread.worker.unref();
    this.idle.push(thread);
  }

  /** Stop serving: callers in line get `undefined`, idle workers are retired. Busy ones are the engine's to abort. */
  close(): void {
    this.closed = true;
    for (const served of this.waiting.splice(0)) served(undefined);
    for (const thread of this.idle.splice(0)) {
      this.all.delete(thread);
      this.retire(thread, false);
    }
  }

  /** Start a worker for the first caller in line, when there is one and room. */
  private serveWaiting(): void {
    if (this.closed || this.waiting.length === 0 || this.all.size >= this.settings.workers) return;
    const next = this.waiting.shift();
    let thread: WorkerThread;
    try {
      thread = this.add(false);
    } catch {
      // The caller then starts a single-use worker of its own, which reports why it cannot.
      next?.(undefined);
      return;
    }
    next?.(thread);
  }

  /** Start a worker: warmed up when it goes idle first, not when a caller already waits for it. */
  private add(warmUp: boolean): WorkerThread {
    const thread = this.start(
      this.memoryLimit,
      (exited) => {
        // A worker that died while idle leaves the pool; a busy one is released by its run.
        const at = this.idle.indexOf(exited);
        if (at >= 0) {
          this.idle.splice(at, 1);
          this.all.delete(exited);
        }
      },
      warmUp,
    );
    this.all.add(thread);
    return thread;
  }
}
