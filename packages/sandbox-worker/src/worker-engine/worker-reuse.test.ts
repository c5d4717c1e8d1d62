import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { afterEach, describe, expect, it } from "vitest";
import { WORKER_CAPABILITIES, WorkerEngine } from "./worker-engine.js";

// The reuse tier through the engine, on real worker threads from the built entry
// (dist/worker-entry.cjs): run `pnpm build` first. How workers are shared and
// retired is proven in worker-pool.test.ts; here, what a user sees.

const engines: WorkerEngine[] = [];
function makeEngine(options?: ConstructorParameters<typeof WorkerEngine>[0]): WorkerEngine {
  const engine = new WorkerEngine(options);
  engines.push(engine);
  return engine;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
});

describe("WorkerEngine reuse tier", () => {
  it.each([
    [{ workers: 0 }, "reuse.workers: Too small: expected number to be >=1 (got 0)"],
    [{ runsPerWorker: 1.5 }, "reuse.runsPerWorker: Invalid input: expected int, received number (got 1.5)"],
    [{ worker: 2 }, 'reuse: Unrecognized key: "worker" (got {"worker":2})'],
    ["yes", 'reuse: expected true, false or { workers, runsPerWorker } (got "yes")'],
  ])("refuses reuse %j, naming the field and the reason", (reuse, reason) => {
    expect(() => new WorkerEngine({ reuse: reuse as never })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: `Invalid WorkerEngine option ${reason} (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md`,
      }),
    );
  });

  it("says in its capabilities that runs share a worker, and keeps the limits of single-use workers", () => {
    const { tier, ...rest } = makeEngine({ reuse: { workers: 2, runsPerWorker: 50 } }).capabilities;
    const { tier: singleUseTier, ...singleUse } = WORKER_CAPABILITIES;
    expect(rest).toEqual(singleUse);
    expect(tier).toBe(
      "worker_threads + node:vm, reused workers: each run in a fresh node:vm context, but up to 2 long-lived workers each serve up to 50 runs in turn with one V8 heap — NOT a security boundary; code that escapes node:vm could see the later runs on its worker",
    );
    expect(singleUseTier).not.toBe(tier);
    expect(makeEngine({ reuse: false }).capabilities).toBe(WORKER_CAPABILITIES);
  });

  it("gives every run on a shared worker fresh globals and intrinsics", async () => {
    const engine = makeEngine({ reuse: { workers: 1 } });
    const tamper = await engine.execute(
      "globalThis.leak = 1; Array.prototype.push = null; Object.prototype.polluted = 1; JSON.stringify = () => 'x'; 'tampered'",
    );
    expect(tamper.result).toBe("tampered");
    const next = await engine.execute(
      "[typeof globalThis.leak, typeof [].push, ({}).polluted, JSON.stringify({ a: 1 })]",
    );
    expect(next.result).toEqual(["undefined", "function", undefined, '{"a":1}']);
  });

  it("answers 8 concurrent callers on 2 workers with the right results", async () => {
    const engine = makeEngine({ reuse: { workers: 2 } });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => engine.execute("input * 2", { input: i })),
    );
    expect(results.map((result) => result.result)).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
  });

  it("recovers after a run that timed out or ran out of memory", async () => {
    const engine = makeEngine({ reuse: { workers: 1 }, timeout: 300, memoryLimit: 32 * 1024 * 1024 });
    const stuck = await engine.execute("while (true) {}");
    const hog = await engine.execute("const keep = []; while (true) keep.push(new Array(1e5).fill(1));");
    const next = await engine.execute("6 * 7");
    expect([stuck.errorCode, hog.errorCode, next.result]).toEqual([
      SANDBOX_CODES.TIMEOUT,
      SANDBOX_CODES.MEMORY_EXCEEDED,
      42,
    ]);
  });

  it("takes a cancelled caller out of line, and ends the run and the callers in line on destroy()", async () => {
    const engine = makeEngine({ reuse: { workers: 1 } });
    await engine.execute("1");
    const busy = engine.execute("await new Promise((done) => setTimeout(done, 2_000)); 'late'");
    const controller = new AbortController();
    const cancelled = engine.execute("'cancelled'", undefined, { signal: controller.signal });
    const waiting = engine.execute("'waiting'");
    controller.abort();
    const cancelledResult = await cancelled;
    await engine.destroy();
    const [busyResult, waitingResult] = await Promise.all([busy, waiting]);
    expect([cancelledResult.error, busyResult.errorCode, waitingResult.error]).toEqual([
      "Execution was cancelled while it waited for a worker (SANDBOX_CANCELLED)",
      SANDBOX_CODES.ENGINE_DISPOSED,
      "WorkerEngine was destroyed while the execution waited for a worker (SANDBOX_ENGINE_DISPOSED)",
    ]);
  });

  it("runs a call with another memoryLimit on a worker of its own", async () => {
    const engine = makeEngine({ reuse: { workers: 1 } });
    const results = await Promise.all([
      engine.execute("await new Promise((done) => setTimeout(done, 100)); 'shared'"),
      engine.execute("'own'", undefined, { memoryLimit: 48 * 1024 * 1024 }),
    ]);
    expect(results.map((result) => result.result)).toEqual(["shared", "own"]);
  });
});
