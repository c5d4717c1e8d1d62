import { withoutErrorCode } from "../error-codes/define-codes.js";
import { isSandboxError, SANDBOX_CODES, SandboxError } from "../error-codes/sandbox-codes.js";
import { describeZodError, SandboxPoolConfigSchema } from "../schemas/sandbox-schemas.js";
import { type PoolAcquisitionResult, recordPoolAcquisition } from "../telemetry/telemetry.js";
import {
  type Clock,
  failure,
  MAX_TIMER_MS,
  type SandboxEngine,
  type SandboxOptions,
  type SandboxPoolConfig,
  type SandboxResult,
} from "../types/sandbox-types.js";

/** Options of {@link SandboxPool}: the `SandboxPoolConfig` fields (all optional) plus the capabilities it needs. */
export interface SandboxPoolOptions extends Partial<SandboxPoolConfig> {
  /** Builds one engine. Called for pre-warming, growth and recycling. */
  factory: () => SandboxEngine;
  /** Source of "now" in epoch ms, for idle ages and durations. Default `Date.now`. */
  clock?: Clock;
  /** Period of the background idle cleanup, in ms; 0 disables it (call {@link SandboxPool.cleanup} yourself). Default `idleTimeoutMs`. */
  cleanupIntervalMs?: number;
}

/** A snapshot of the pool. */
export interface SandboxPoolStats {
  /** Live engines (idle + busy). */
  size: number;
  idle: number;
  busy: number;
  /** Callers waiting for an engine. */
  queued: number;
  /** Engines built so far. */
  totalCreated: number;
  /** Engines destroyed after `maxExecutionsPerEngine` executions (or after failing). */
  totalRecycled: number;
  /** Idle engines destroyed by cleanup. */
  totalReclaimed: number;
  /** Calls answered with `SANDBOX_POOL_EXHAUSTED`. */
  totalExhausted: number;
  /** Executions run through the pool. */
  totalExecutions: number;
  /** Engine `destroy()` calls that rejected. */
  destroyFailures: number;
}

interface Slot {
  readonly engine: SandboxEngine;
  executions: number;
  lastUsedAt: number;
  /** Retire instead of reuse on release (the engine misbehaved). */
  retire: boolean;
}

interface Waiter {
  settle: (outcome: Slot | SandboxError) => void;
}

/**
 * A pool of interchangeable engines built by `factory`. It pre-warms
 * `minSize` engines, grows lazily to `maxSize`, recycles an engine after
 * `maxExecutionsPerEngine` executions and reclaims engines idle for more than
 * `idleTimeoutMs` down to `minSize`. When no engine can be had, `execute`
 * resolves `{ success: false, errorCode: "SANDBOX_POOL_EXHAUSTED" }` — at once
 * when `maxQueue` is 0, otherwise after waiting in a bounded FIFO queue for up
 * to `acquireTimeoutMs`.
 *
 * @example
 * await using pool = new SandboxPool({ factory: () => new VmEngine(limits), minSize: 1, maxSize: 4 });
 * const result = await pool.execute("2 + 3");
 */
export class SandboxPool implements AsyncDisposable {
  private readonly factory: () => SandboxEngine;
  private readonly clock: Clock;
  private readonly config: SandboxPoolConfig;
  private readonly slots = new Set<Slot>();
  /** Idle slots, least recently used first. */
  private idle: Slot[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly destroying = new Set<Promise<void>>();
  /** Running executions: each callback ends its caller's wait once the pool is destroyed. */
  private readonly inFlight = new Set<() => void>();
  private cleanupTimer: NodeJS.Timeout | undefined;
  private destroyed: Promise<void> | undefined;
  private readonly counters = {
    totalCreated: 0,
    totalRecycled: 0,
    totalReclaimed: 0,
    totalExhausted: 0,
    totalExecutions: 0,
    destroyFailures: 0,
  };

  constructor(options: SandboxPoolOptions) {
    if (typeof options?.factory !== "function") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        "SandboxPool: options.factory must be a function returning a SandboxEngine",
        { details: { field: "factory" } },
      );
    }
    this.factory = options.factory;
    if (options.clock !== undefined && typeof options.clock !== "function") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `SandboxPool: options.clock must be a function returning epoch ms (got ${typeof options.clock})`,
        { details: { field: "clock" } },
      );
    }
    this.clock = options.clock ?? Date.now;
    this.config = parsePoolConfig(options);
    const cleanupIntervalMs = options.cleanupIntervalMs ?? this.config.idleTimeoutMs;
    if (
      !Number.isSafeInteger(cleanupIntervalMs) ||
      cleanupIntervalMs < 0 ||
      cleanupIntervalMs > MAX_TIMER_MS
    ) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `SandboxPool: cleanupIntervalMs must be an integer number of ms from 0 to ${MAX_TIMER_MS} (setInterval's ceiling) (got ${String(cleanupIntervalMs)})`,
        { details: { field: "cleanupIntervalMs" } },
      );
    }

    for (let i = 0; i < this.config.minSize; i++) {
      try {
        this.idle.push(this.create());
      } catch (cause) {
        for (const slot of this.slots) this.retire(slot);
        throw new SandboxError(
          SANDBOX_CODES.ENGINE_FAILED,
          `SandboxPool: the engine factory failed while pre-warming engine ${i + 1} of ${this.config.minSize}: ${messageOf(cause)}`,
          { cause },
        );
      }
    }
    if (cleanupIntervalMs > 0 && this.config.maxSize > this.config.minSize) {
      this.cleanupTimer = setInterval(() => void this.cleanup(), cleanupIntervalMs);
      this.cleanupTimer.unref();
    }
  }

  /**
   * Run `code` on a pooled engine. Resolves a failed result with
   * `SANDBOX_POOL_EXHAUSTED` (or `SANDBOX_ENGINE_FAILED` when the factory threw,
   * `SANDBOX_ENGINE_DISPOSED` when the pool was destroyed while waiting or
   * running, `SANDBOX_ENGINE_FAILED` when the engine resolved something that is
   * not a result); rejects only when called after {@link destroy} or when the
   * engine rejects.
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    if (this.destroyed !== undefined) throw disposedError("execute");
    const startedAt = this.clock();
    const acquired = await this.acquire();
    if (acquired instanceof SandboxError) return this.failure(acquired, startedAt);
    const slot = acquired;
    this.counters.totalExecutions++;
    let abandon: () => void = () => undefined;
    const abandoned = new Promise<typeof ABANDONED>((resolve) => {
      abandon = () => resolve(ABANDONED);
    });
    this.inFlight.add(abandon);
    let result: SandboxResult | typeof ABANDONED;
    try {
      // destroy() ends this wait even when the engine never answers (see `destroy`).
      result = await Promise.race([slot.engine.execute(code, context, options), abandoned]);
    } catch (error) {
      // A rejection is misuse (bad options) or a broken engine; only the former keeps the engine.
      const misuse =
        isSandboxError(error) &&
        error.code !== SANDBOX_CODES.ENGINE_DISPOSED &&
        error.code !== SANDBOX_CODES.ENGINE_FAILED;
      if (!misuse) slot.retire = true;
      this.release(slot);
      throw error;
    } finally {
      this.inFlight.delete(abandon);
    }
    if (result === ABANDONED) {
      this.release(slot);
      const error = new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "SandboxPool: the pool was destroyed while the code ran and the engine did not end the execution",
      );
      return this.failure(error, startedAt);
    }
    if (!isResultShaped(result)) {
      slot.retire = true;
      this.release(slot);
      const error = new SandboxError(
        SANDBOX_CODES.ENGINE_FAILED,
        `SandboxPool: the engine did not resolve a SandboxResult (got ${result === null ? "null" : typeof result}); it was retired`,
      );
      return this.failure(error, startedAt);
    }
    this.release(slot);
    return result;
  }

  /** `error` as a `success:false` result timed from `startedAt`. */
  private failure(error: SandboxError, startedAt: number): SandboxResult {
    // The error's message already ends with its code; `failure` adds it again, so strip it first.
    return failure(error.code, withoutErrorCode(error.message), {
      duration: Math.max(0, this.clock() - startedAt),
    });
  }

  /** Live engines (idle + busy). */
  size(): number {
    return this.slots.size;
  }

  /** Counts of live, idle, busy and queued, and lifetime totals. */
  stats(): SandboxPoolStats {
    const idle = this.idle.length;
    return {
      size: this.slots.size,
      idle,
      busy: this.slots.size - idle,
      queued: this.waiters.length,
      ...this.counters,
    };
  }

  /**
   * One cleanup tick: destroy engines idle for more than `idleTimeoutMs`,
   * least recently used first, until `minSize` remain. Resolves the number
   * reclaimed once their `destroy()` settled. The size drops synchronously.
   */
  async cleanup(): Promise<number> {
    if (this.destroyed !== undefined) return 0;
    const now = this.clock();
    const keep: Slot[] = [];
    const reclaim: Slot[] = [];
    for (const slot of this.idle) {
      const expired = now - slot.lastUsedAt > this.config.idleTimeoutMs;
      if (expired && this.slots.size - reclaim.length > this.config.minSize) reclaim.push(slot);
      else keep.push(slot);
    }
    this.idle = keep;
    const destroys = reclaim.map((slot) => this.retire(slot));
    this.counters.totalReclaimed += reclaim.length;
    await Promise.all(destroys);
    return reclaim.length;
  }

  /**
   * Destroy every engine (busy ones included, which ends their executions),
   * answer queued callers with `SANDBOX_ENGINE_DISPOSED` and stop the cleanup
   * timer. Once every engine's destroy settled, executions their engine still
   * did not end resolve `SANDBOX_ENGINE_DISPOSED` too. Idempotent: later calls
   * return the same promise.
   */
  destroy(): Promise<void> {
    if (this.destroyed !== undefined) return this.destroyed;
    if (this.cleanupTimer !== undefined) clearInterval(this.cleanupTimer);
    this.cleanupTimer = undefined;
    for (const waiter of this.waiters.splice(0)) waiter.settle(disposedError("acquire"));
    this.idle = [];
    for (const slot of [...this.slots]) this.retire(slot);
    // A working engine ends its running executions when destroyed; one that does
    // not must not leave its caller waiting forever, so once every destroy()
    // settled, whatever is still running is answered with ENGINE_DISPOSED.
    this.destroyed = Promise.all([...this.destroying]).then(() => {
      for (const abandon of [...this.inFlight]) abandon();
    });
    return this.destroyed;
  }

  /** Same as {@link destroy}. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private acquire(): Slot | SandboxError | Promise<Slot | SandboxError> {
    const ready = this.take();
    if (ready !== undefined) return ready;
    if (this.waiters.length < this.config.maxQueue) return this.enqueue();
    this.counters.totalExhausted++;
    recordPoolAcquisition("exhausted");
    return new SandboxError(
      SANDBOX_CODES.POOL_EXHAUSTED,
      `SandboxPool: all ${this.slots.size} engines (maxSize ${this.config.maxSize}) are busy and ` +
        (this.config.maxQueue === 0
          ? "queueing is off (maxQueue 0)"
          : `the wait queue is full (maxQueue ${this.config.maxQueue})`) +
        "; retry later, raise maxSize, or allow waiting with maxQueue",
      { details: { size: this.slots.size, maxSize: this.config.maxSize, maxQueue: this.config.maxQueue } },
    );
  }

  /** An idle engine or a new one, when either is possible right now; records the acquisition. */
  private take(label?: PoolAcquisitionResult): Slot | SandboxError | undefined {
    const idle = this.idle.pop();
    if (idle !== undefined) {
      recordPoolAcquisition(label ?? "acquired");
      return idle;
    }
    if (this.slots.size >= this.config.maxSize) return undefined;
    try {
      const slot = this.create();
      recordPoolAcquisition(label ?? "created");
      return slot;
    } catch (cause) {
      recordPoolAcquisition("failed");
      return new SandboxError(
        SANDBOX_CODES.ENGINE_FAILED,
        `SandboxPool: the engine factory failed: ${messageOf(cause)}`,
        { cause },
      );
    }
  }

  private enqueue(): Promise<Slot | SandboxError> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        const index = this.waiters.indexOf(waiter);
        if (index !== -1) this.waiters.splice(index, 1);
        this.counters.totalExhausted++;
        recordPoolAcquisition("timeout");
        resolve(
          new SandboxError(
            SANDBOX_CODES.POOL_EXHAUSTED,
            `SandboxPool: no engine became free within acquireTimeoutMs (${this.config.acquireTimeoutMs} ms) ` +
              `while all ${this.slots.size} engines were busy; raise maxSize or acquireTimeoutMs`,
            { details: { acquireTimeoutMs: this.config.acquireTimeoutMs, maxSize: this.config.maxSize } },
          ),
        );
      }, this.config.acquireTimeoutMs);
      const waiter: Waiter = {
        settle: (outcome) => {
          clearTimeout(timer);
          if (isSandboxError(outcome, SANDBOX_CODES.ENGINE_DISPOSED)) recordPoolAcquisition("disposed");
          resolve(outcome);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private release(slot: Slot): void {
    slot.executions++;
    slot.lastUsedAt = this.clock();
    if (this.destroyed !== undefined || !this.slots.has(slot)) return;
    if (slot.retire || slot.executions >= this.config.maxExecutionsPerEngine) {
      this.counters.totalRecycled++;
      void this.retire(slot);
    } else {
      this.idle.push(slot);
    }
    this.dispatch();
  }

  /** Hand free capacity to queued callers in FIFO order, then keep `minSize` warm. */
  private dispatch(): void {
    while (this.waiters.length > 0) {
      const outcome = this.take("queued");
      if (outcome === undefined) return;
      this.waiters.shift()?.settle(outcome);
    }
    while (this.slots.size < this.config.minSize) {
      try {
        this.idle.push(this.create());
      } catch {
        return; // the next acquisition retries the factory and reports its failure
      }
    }
  }

  private create(): Slot {
    const engine = this.factory();
    if (typeof engine?.execute !== "function" || typeof engine.destroy !== "function") {
      throw new TypeError("factory did not return a SandboxEngine (execute and destroy are required)");
    }
    const slot: Slot = { engine, executions: 0, lastUsedAt: this.clock(), retire: false };
    this.slots.add(slot);
    this.counters.totalCreated++;
    return slot;
  }

  /** Remove `slot` from the pool and destroy its engine; the promise never rejects. */
  private retire(slot: Slot): Promise<void> {
    this.slots.delete(slot);
    const done: Promise<void> = Promise.resolve()
      .then(() => slot.engine.destroy())
      .catch(() => {
        this.counters.destroyFailures++;
      })
      .finally(() => {
        this.destroying.delete(done);
      });
    this.destroying.add(done);
    return done;
  }
}

function parsePoolConfig(options: SandboxPoolOptions): SandboxPoolConfig {
  const input: Record<string, unknown> = {};
  for (const key of [
    "minSize",
    "maxSize",
    "maxExecutionsPerEngine",
    "idleTimeoutMs",
    "maxQueue",
    "acquireTimeoutMs",
  ] as const) {
    if (options[key] !== undefined) input[key] = options[key];
  }
  const parsed = SandboxPoolConfigSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new SandboxError(
    SANDBOX_CODES.INVALID_CONFIG,
    `Invalid pool config: ${describeZodError(parsed.error, "pool", input)}`,
    {
      details: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
    },
  );
}

/** What a running execution resolves with when destroy() ended the wait for it. */
const ABANDONED: unique symbol = Symbol("abandoned");

function isResultShaped(value: unknown): value is SandboxResult {
  return typeof value === "object" && value !== null && typeof (value as SandboxResult).success === "boolean";
}

function disposedError(what: string): SandboxError {
  return new SandboxError(
    SANDBOX_CODES.ENGINE_DISPOSED,
    `SandboxPool: cannot ${what}: the pool was destroyed; create a new SandboxPool`,
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
