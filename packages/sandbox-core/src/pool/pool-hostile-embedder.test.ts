import { describe, expect, it } from "vitest";
import { SANDBOX_CODES, SandboxError } from "../error-codes/index.js";
import type { EngineCapabilities, SandboxEngine, SandboxResult } from "../types/index.js";
import { SandboxPool } from "./index.js";

/**
 * Deliberately broken engines (the "broken engine" a factory may return):
 * the real engines live in other packages and are exercised through the
 * umbrella's tests; here the pool must survive engines that misbehave.
 */
class BrokenEngine implements SandboxEngine {
  readonly name = "vm";
  readonly capabilities: EngineCapabilities = {
    securityBoundary: false,
    tier: "test double: misbehaves on purpose",
    enforcesMemoryLimit: false,
    boundsAsyncWork: false,
    streamsLogs: false,
    abortsRunningCode: false,
    measuresCpu: false,
  };
  destroyed = false;
  constructor(private readonly behaviour: "ignores-destroy" | "returns-garbage") {}
  execute(): Promise<SandboxResult> {
    // "ignores-destroy": never settles, not even when destroyed.
    if (this.behaviour === "ignores-destroy") return new Promise<SandboxResult>(() => undefined);
    return Promise.resolve(undefined as unknown as SandboxResult);
  }
  registerModule(): void {}
  unregisterModule(): boolean {
    return false;
  }
  reset(): void {}
  async destroy(): Promise<void> {
    this.destroyed = true;
  }
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("SandboxPool under a hostile embedder", () => {
  it("settles a running execution with ENGINE_DISPOSED on destroy even when the engine never answers", async () => {
    const engines: BrokenEngine[] = [];
    const pool = new SandboxPool({
      factory: () => {
        const engine = new BrokenEngine("ignores-destroy");
        engines.push(engine);
        return engine;
      },
      maxSize: 1,
      maxQueue: 1,
      cleanupIntervalMs: 0,
    });
    const running = pool.execute("1");
    const queued = pool.execute("2");
    await settle();
    await pool.destroy();
    const outcome = await Promise.race([
      Promise.all([running, queued]),
      new Promise<"hang">((resolve) => setTimeout(() => resolve("hang"), 1_000)),
    ]);
    expect(outcome).not.toBe("hang");
    const [first, second] = outcome as SandboxResult[];
    expect(first).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_DISPOSED });
    expect(first?.error).toMatch(/destroyed while/);
    expect(second).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_DISPOSED });
    expect(engines.every((e) => e.destroyed)).toBe(true);
  });

  it("answers an engine that resolves something other than a result with ENGINE_FAILED and retires it", async () => {
    let created = 0;
    const pool = new SandboxPool({
      factory: () => {
        created++;
        return new BrokenEngine("returns-garbage");
      },
      maxSize: 1,
      cleanupIntervalMs: 0,
    });
    const result = await pool.execute("1");
    expect(result).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_FAILED, logs: [] });
    expect(result.error).toMatch(/did not resolve a SandboxResult/);
    expect(typeof result.duration).toBe("number");
    expect(pool.stats().totalRecycled).toBe(1);
    await pool.execute("2");
    expect(created).toBe(2);
    await pool.destroy();
  });

  it("refuses a clock or cleanup interval it cannot use, naming the field", () => {
    const factory = () => new BrokenEngine("returns-garbage");
    const attempts: Array<[string, () => unknown]> = [
      // @ts-expect-error — a clock must be a function
      ["clock", () => new SandboxPool({ factory, clock: 5 })],
      // setInterval silently turns a delay above 2^31-1 ms into 1 ms: a busy loop.
      ["cleanupIntervalMs", () => new SandboxPool({ factory, maxSize: 2, cleanupIntervalMs: 2 ** 31 })],
    ];
    for (const [field, attempt] of attempts) {
      let caught: unknown;
      try {
        attempt();
      } catch (error) {
        caught = error;
      }
      expect(caught, field).toBeInstanceOf(SandboxError);
      expect((caught as SandboxError).code).toBe(SANDBOX_CODES.INVALID_CONFIG);
      expect((caught as SandboxError).message).toContain(field);
    }
  });
});
