import { metrics } from "@opentelemetry/api";
import { type DataPoint, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isSandboxError, SandboxError } from "../error-codes/index.js";
import type { EngineCapabilities, SandboxEngine, SandboxModule, SandboxResult } from "../types/index.js";
import { SandboxPool, type SandboxPoolOptions } from "./index.js";

/**
 * A controllable test double of an engine: it runs no guest code. The pool is
 * engine-agnostic and these tests are about saturation, so the engine only
 * needs to answer, hold on command ("hold"), fail on command ("reject") and
 * record its lifecycle.
 */
class ControllableTestEngine implements SandboxEngine {
  readonly name = "vm";
  readonly capabilities: EngineCapabilities = {
    securityBoundary: false,
    tier: "test double: runs no code",
    enforcesMemoryLimit: false,
    boundsAsyncWork: false,
    streamsLogs: false,
    abortsRunningCode: false,
    measuresCpu: false,
  };
  executions = 0;
  destroyCalls = 0;
  private readonly held: Array<{ finish: (result: SandboxResult) => void; result: SandboxResult }> = [];

  constructor(readonly id: number) {}

  get destroyed(): boolean {
    return this.destroyCalls > 0;
  }

  execute(code: string): Promise<SandboxResult> {
    if (this.destroyed)
      return Promise.reject(new SandboxError("SANDBOX_ENGINE_DISPOSED", "engine destroyed"));
    this.executions++;
    if (code === "reject") return Promise.reject(new Error("engine crashed"));
    const result: SandboxResult = {
      success: true,
      result: `engine ${this.id}: ${code}`,
      duration: 0,
      logs: [],
    };
    if (code !== "hold") return Promise.resolve(result);
    return new Promise((finish) => this.held.push({ finish, result }));
  }

  /** Let every held execution finish. */
  releaseHeld(): void {
    for (const { finish, result } of this.held.splice(0)) finish(result);
  }

  registerModule(_module: SandboxModule): void {}
  unregisterModule(_name: string): boolean {
    return false;
  }
  reset(): void {}

  destroy(): Promise<void> {
    this.destroyCalls++;
    for (const { finish } of this.held.splice(0)) {
      finish({
        success: false,
        error: "destroyed",
        errorCode: "SANDBOX_ENGINE_DISPOSED",
        duration: 0,
        logs: [],
      });
    }
    return Promise.resolve();
  }
}

function harness(options: Omit<SandboxPoolOptions, "factory" | "clock"> = {}) {
  const engines: ControllableTestEngine[] = [];
  let now = 10_000;
  const pool = new SandboxPool({
    cleanupIntervalMs: 0,
    ...options,
    clock: () => now,
    factory: () => {
      const engine = new ControllableTestEngine(engines.length + 1);
      engines.push(engine);
      return engine;
    },
  });
  return {
    pool,
    engines,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** Resolve once every queued microtask settled (pool hand-offs are promise-based). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

class PullReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

afterEach(() => {
  vi.useRealTimers();
  metrics.disable();
});

describe("SandboxPool", () => {
  it("reports POOL_EXHAUSTED when saturated", async () => {
    const reader = new PullReader();
    const provider = new MeterProvider({ readers: [reader] });
    metrics.setGlobalMeterProvider(provider);

    const { pool, engines } = harness({ minSize: 1, maxSize: 2 });
    expect(pool.size()).toBe(1);
    const first = pool.execute("hold");
    const second = pool.execute("hold");
    await settle();
    expect(pool.size()).toBe(2);

    const third = await pool.execute("1 + 1");
    expect(third).toEqual({
      success: false,
      error:
        "SandboxPool: all 2 engines (maxSize 2) are busy and queueing is off (maxQueue 0); " +
        "retry later, raise maxSize, or allow waiting with maxQueue (SANDBOX_POOL_EXHAUSTED)",
      errorCode: "SANDBOX_POOL_EXHAUSTED",
      duration: 0,
      logs: [],
    });
    expect(third.error).toContain("POOL_EXHAUSTED");

    for (const engine of engines) engine.releaseHeld();
    expect(await first).toEqual({ success: true, result: "engine 1: hold", duration: 0, logs: [] });
    expect(await second).toEqual({ success: true, result: "engine 2: hold", duration: 0, logs: [] });
    expect(await pool.execute("after")).toEqual({
      success: true,
      result: "engine 2: after",
      duration: 0,
      logs: [],
    });
    expect(pool.stats()).toEqual({
      size: 2,
      idle: 2,
      busy: 0,
      queued: 0,
      totalCreated: 2,
      totalRecycled: 0,
      totalReclaimed: 0,
      totalExhausted: 1,
      totalExecutions: 3,
      destroyFailures: 0,
    });

    const { resourceMetrics } = await reader.collect();
    const acquisitions = resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === "sandbox_pool_acquisitions_total");
    expect(
      ((acquisitions?.dataPoints ?? []) as DataPoint<number>[]).map((p) => [p.attributes.result, p.value]),
    ).toEqual([
      ["acquired", 2],
      ["created", 1],
      ["exhausted", 1],
    ]);
    await pool.destroy();
    await provider.shutdown();
  });

  it("cleanup reclaims idle engines to minSize", async () => {
    const { pool, engines, advance } = harness({ minSize: 1, maxSize: 3, idleTimeoutMs: 1_000 });
    const runs = [pool.execute("hold"), pool.execute("hold"), pool.execute("hold")];
    await settle();
    expect(pool.size()).toBe(3);
    for (const engine of engines) engine.releaseHeld();
    await Promise.all(runs);
    expect(pool.stats()).toMatchObject({ size: 3, idle: 3, busy: 0 });

    advance(1_000); // idle for exactly idleTimeoutMs: not yet "more than"
    expect(await pool.cleanup()).toBe(0);
    expect(pool.size()).toBe(3);

    advance(1);
    const reclaiming = pool.cleanup();
    expect(pool.size()).toBe(1);
    expect(await reclaiming).toBe(2);
    expect(engines.map((e) => e.destroyCalls)).toEqual([1, 1, 0]); // least recently used go first
    expect(pool.stats()).toMatchObject({ size: 1, idle: 1, totalReclaimed: 2 });

    advance(60_000);
    expect(await pool.cleanup()).toBe(0); // never below minSize
    await pool.destroy();
  });

  it("runs the periodic cleanup on an unref'd timer and clears it on destroy", async () => {
    vi.useFakeTimers();
    const { pool, engines, advance } = harness({
      minSize: 0,
      maxSize: 2,
      idleTimeoutMs: 1_000,
      cleanupIntervalMs: 500,
    });
    expect(vi.getTimerCount()).toBe(1);
    await pool.execute("x");
    expect(pool.size()).toBe(1);
    advance(1_001);
    await vi.advanceTimersByTimeAsync(500);
    expect(pool.size()).toBe(0);
    expect(engines[0]?.destroyCalls).toBe(1);
    await pool.destroy();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("recycles an engine after maxExecutionsPerEngine executions", async () => {
    const { pool, engines } = harness({ minSize: 1, maxSize: 1, maxExecutionsPerEngine: 2 });
    const results = [];
    for (const code of ["a", "b", "c"]) results.push((await pool.execute(code)).result);
    expect(results).toEqual(["engine 1: a", "engine 1: b", "engine 2: c"]);
    await settle();
    expect(engines.map((e) => e.destroyCalls)).toEqual([1, 0]);
    expect(pool.stats()).toMatchObject({ size: 1, totalCreated: 2, totalRecycled: 1 });
    await pool.destroy();
  });

  it("serves queued callers in FIFO order and fails fast once the queue is full", async () => {
    const { pool, engines } = harness({ minSize: 0, maxSize: 1, maxQueue: 2, acquireTimeoutMs: 60_000 });
    const holding = pool.execute("hold");
    const order: string[] = [];
    const queuedA = pool.execute("A").then((r) => order.push(String(r.result)));
    const queuedB = pool.execute("B").then((r) => order.push(String(r.result)));
    await settle();
    expect(pool.stats().queued).toBe(2);
    const overflow = await pool.execute("C");
    expect(overflow.errorCode).toBe("SANDBOX_POOL_EXHAUSTED");
    expect(overflow.error).toBe(
      "SandboxPool: all 1 engines (maxSize 1) are busy and the wait queue is full (maxQueue 2); " +
        "retry later, raise maxSize, or allow waiting with maxQueue (SANDBOX_POOL_EXHAUSTED)",
    );

    engines[0]?.releaseHeld();
    await Promise.all([holding, queuedA, queuedB]);
    expect(order).toEqual(["engine 1: A", "engine 1: B"]);
    expect(pool.stats()).toMatchObject({ queued: 0, size: 1, totalCreated: 1 });
    await pool.destroy();
  });

  it("answers a queued caller with POOL_EXHAUSTED after acquireTimeoutMs", async () => {
    vi.useFakeTimers();
    const { pool, engines } = harness({ maxSize: 1, maxQueue: 1, acquireTimeoutMs: 2_000 });
    const holding = pool.execute("hold");
    const waiting = pool.execute("late");
    await vi.advanceTimersByTimeAsync(1_999);
    expect(pool.stats().queued).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toEqual({
      success: false,
      error:
        "SandboxPool: no engine became free within acquireTimeoutMs (2000 ms) while all 1 engines were busy; " +
        "raise maxSize or acquireTimeoutMs (SANDBOX_POOL_EXHAUSTED)",
      errorCode: "SANDBOX_POOL_EXHAUSTED",
      duration: 0,
      logs: [],
    });
    expect(pool.stats().queued).toBe(0);
    engines[0]?.releaseHeld();
    await holding;
    expect(vi.getTimerCount()).toBe(0);
    await pool.destroy();
  });

  it("destroy is idempotent, destroys every engine and ends queued callers with ENGINE_DISPOSED", async () => {
    const { pool, engines } = harness({ minSize: 2, maxSize: 2, maxQueue: 1 });
    const busy = [pool.execute("hold"), pool.execute("hold")];
    const queued = pool.execute("waiting");
    await settle();

    const first = pool.destroy();
    expect(pool.destroy()).toBe(first);
    await pool[Symbol.asyncDispose]();
    await first;

    expect(engines.map((e) => e.destroyCalls)).toEqual([1, 1]);
    expect((await queued).errorCode).toBe("SANDBOX_ENGINE_DISPOSED");
    expect((await queued).error).toBe(
      "SandboxPool: cannot acquire: the pool was destroyed; create a new SandboxPool (SANDBOX_ENGINE_DISPOSED)",
    );
    expect((await Promise.all(busy)).map((r) => r.errorCode)).toEqual([
      "SANDBOX_ENGINE_DISPOSED",
      "SANDBOX_ENGINE_DISPOSED",
    ]);
    expect(pool.size()).toBe(0);
    await expect(pool.execute("1")).rejects.toSatisfy((error) =>
      isSandboxError(error, "SANDBOX_ENGINE_DISPOSED"),
    );
    expect(await pool.cleanup()).toBe(0);
  });

  it("retires an engine whose execute rejected and passes the rejection on", async () => {
    const { pool, engines } = harness({ minSize: 1, maxSize: 1 });
    await expect(pool.execute("reject")).rejects.toThrow("engine crashed");
    await settle();
    expect(engines.map((e) => e.destroyCalls)).toEqual([1, 0]);
    expect((await pool.execute("next")).result).toBe("engine 2: next");
    expect(pool.stats()).toMatchObject({ size: 1, totalRecycled: 1 });
    await pool.destroy();
  });

  it("reports a throwing factory as ENGINE_FAILED", async () => {
    let calls = 0;
    const flaky = new SandboxPool({
      maxSize: 2,
      cleanupIntervalMs: 0,
      clock: () => 0,
      factory: () => {
        calls++;
        throw new Error(`no engine #${calls}`);
      },
    });
    expect(await flaky.execute("1")).toEqual({
      success: false,
      error: "SandboxPool: the engine factory failed: no engine #1 (SANDBOX_ENGINE_FAILED)",
      errorCode: "SANDBOX_ENGINE_FAILED",
      duration: 0,
      logs: [],
    });
    await flaky.destroy();

    let prewarmed = 0;
    const made: ControllableTestEngine[] = [];
    let caught: unknown;
    try {
      new SandboxPool({
        minSize: 2,
        maxSize: 2,
        factory: () => {
          if (prewarmed++ === 1) throw new Error("out of isolates");
          const engine = new ControllableTestEngine(prewarmed);
          made.push(engine);
          return engine;
        },
      });
    } catch (error) {
      caught = error;
    }
    expect(isSandboxError(caught, "SANDBOX_ENGINE_FAILED")).toBe(true);
    expect((caught as Error).message).toBe(
      "SandboxPool: the engine factory failed while pre-warming engine 2 of 2: out of isolates (SANDBOX_ENGINE_FAILED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_ENGINE_FAILED.md",
    );
    await settle();
    expect(made.map((e) => e.destroyCalls)).toEqual([1]);
  });

  it("validates its config with the pool schema", () => {
    const factory = () => new ControllableTestEngine(1);
    expect(() => new SandboxPool({ factory, minSize: 3, maxSize: 2 })).toThrowError(
      "Invalid pool config: pool.minSize: minSize must not exceed maxSize (got 3) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
    expect(() => new SandboxPool({ factory, maxQueue: -1 })).toThrowError(/pool\.maxQueue: .*\(got -1\)/);
    expect(() => new SandboxPool({} as SandboxPoolOptions)).toThrowError(
      "SandboxPool: options.factory must be a function returning a SandboxEngine (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
  });
});
