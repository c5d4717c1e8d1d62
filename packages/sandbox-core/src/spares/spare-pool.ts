import { DEMAND_WINDOW_MS, SpareDemand } from "./spare-demand.js";

/** What a {@link SparePool} asks of the engine that owns the spares. */
export interface SpareHooks<T> {
  /** Boot one spare, off every caller's path; `undefined` when none could be started. */
  start(): T | undefined;
  /** Stop a spare the pool no longer keeps (the engine makes this idempotent). */
  retire(spare: T): void;
  /** False once a spare died on its own: the pool drops it without retiring it. */
  alive(spare: T): boolean;
  /**
   * True while a spare is still booting. The pool boots the next spare only
   * when none is (a worker says so with its `ready` message; the engine then
   * calls {@link SparePool.refillAfter}). Without it, starts are only spaced
   * by `spacingMs`.
   */
  booting?(spare: T): boolean;
}

/** Options of {@link SparePool}. */
export interface SparePoolOptions {
  /** Spares kept at most (0: none). */
  maxSpares: number;
  /** How long a burst is remembered, in ms (default {@link DEMAND_WINDOW_MS}; tests shorten it). */
  windowMs?: number;
  /** Least time between two starts, in ms (default 0): for spares with no ready signal. */
  spacingMs?: number;
}

/**
 * Booted single-use spares (workers, children) kept ready for the next runs,
 * as many as {@link SpareDemand} wants: the most runs in flight at once lately,
 * between one and `maxSpares`. Spares boot one after another, never several
 * at once (that would take the cores from the runs they are for), on unref'd
 * timers (an idle pool never keeps the process alive), and the newest are
 * retired when the bursts stop. The engine says when runs start and end, and
 * takes spares with its own matching rule.
 */
export class SparePool<T> {
  private readonly spares: T[] = [];
  private readonly demand: SpareDemand;
  private readonly windowMs: number;
  private readonly spacingMs: number;
  private readonly maxSpares: number;
  private refill: NodeJS.Timeout | undefined;
  private trim: NodeJS.Timeout | undefined;
  private lastStartAt = Number.NEGATIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly hooks: SpareHooks<T>,
    options: SparePoolOptions,
  ) {
    this.windowMs = options.windowMs ?? DEMAND_WINDOW_MS;
    this.spacingMs = options.spacingMs ?? 0;
    this.maxSpares = options.maxSpares;
    this.demand = new SpareDemand({ max: options.maxSpares, windowMs: this.windowMs });
  }

  /** The spares now, oldest first (a copy). */
  get list(): readonly T[] {
    return [...this.spares];
  }

  /** Runs in flight now (between {@link started} and {@link ended}). */
  get running(): number {
    return this.demand.running;
  }

  /**
   * Take the oldest live spare `accept` takes, preferring one `prefer` likes
   * (e.g. one that has booted); `undefined` when none.
   */
  take(accept: (spare: T) => boolean, prefer?: (spare: T) => boolean): T | undefined {
    this.dropDead();
    let index = prefer === undefined ? -1 : this.spares.findIndex((spare) => accept(spare) && prefer(spare));
    if (index === -1) index = this.spares.findIndex(accept);
    return index === -1 ? undefined : this.spares.splice(index, 1)[0];
  }

  /** Retire every spare `reject` names (e.g. those booted with a heap no run asks for any more). */
  discard(reject: (spare: T) => boolean): void {
    this.dropDead();
    for (let i = this.spares.length - 1; i >= 0; i--) {
      const spare = this.spares[i] as T;
      if (!reject(spare)) continue;
      this.spares.splice(i, 1);
      this.hooks.retire(spare);
    }
  }

  /** Forget a spare that exited on its own. */
  drop(spare: T): void {
    const index = this.spares.indexOf(spare);
    if (index !== -1) this.spares.splice(index, 1);
  }

  /** A run started: it counts toward the demand. */
  started(): void {
    this.demand.started();
  }

  /** A run that {@link started} ended. */
  ended(): void {
    this.demand.ended();
  }

  /**
   * Boot the next spare in `delayMs` (a macrotask, off the current call's
   * path; never sooner than `spacingMs` after the last start) when the
   * demand wants one more. A pending refill is kept, unless this one is due
   * at once.
   */
  refillAfter(delayMs: number): void {
    if (this.closed || this.maxSpares === 0) return;
    if (this.refill !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.refill);
    }
    const wait = Math.max(delayMs, this.lastStartAt + this.spacingMs - performance.now());
    this.refill = setTimeout(() => {
      this.refill = undefined;
      this.boot();
    }, wait);
    this.refill.unref();
  }

  /** Stop booting and hand back the spares, for the owner to stop with the rest (idempotent: then none). */
  close(): T[] {
    this.closed = true;
    clearTimeout(this.refill);
    clearTimeout(this.trim);
    this.refill = undefined;
    this.trim = undefined;
    return this.spares.splice(0);
  }

  private boot(): void {
    if (this.closed) return;
    const target = this.demand.target();
    this.trimTo(target);
    const booting = this.hooks.booting;
    if (this.spares.length >= target || (booting !== undefined && this.spares.some(booting))) return;
    const spare = this.hooks.start();
    if (spare === undefined) return; // none now; a run that needs one starts its own and reports why
    this.spares.push(spare);
    this.lastStartAt = performance.now();
    if (this.spares.length < target && (booting === undefined || !booting(spare))) this.refillAfter(0);
  }

  private dropDead(): void {
    for (let i = this.spares.length - 1; i >= 0; i--)
      if (!this.hooks.alive(this.spares[i] as T)) this.spares.splice(i, 1);
  }

  /** Retire dead and extra spares (the newest first); while more than one is kept, look again a window later. */
  private trimTo(target: number): void {
    this.dropDead();
    while (this.spares.length > target) this.hooks.retire(this.spares.pop() as T);
    if (this.trim === undefined && this.spares.length > 1) {
      this.trim = setTimeout(() => {
        this.trim = undefined;
        if (!this.closed) this.trimTo(this.demand.target());
      }, this.windowMs);
      this.trim.unref();
    }
  }
}
