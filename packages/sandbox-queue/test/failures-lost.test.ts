import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueSandbox } from "../src/index.js";
import { type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import { FAST_CALLER, redisMissing, since, until, workerFleet } from "./failures-harness.js";

// What the caller sees when the worker that took its job dies and no other worker takes over,
// and what onLog sees when another worker does (the replay's first lines are not delivered again).

describe.skipIf(redisMissing)("a job whose worker died", () => {
  let redis: RedisServer;
  const fleet = workerFleet(() => redis.url);
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await fleet.stopAll();
    await redis?.stop();
  });

  it("no worker takes it over: SANDBOX_DISPATCH_LOST once timeout + lostAfter have passed since it started", async () => {
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "orphaned", ...FAST_CALLER, lostAfter: "1s" },
      { timeout: "2s" },
    );
    const worker = await fleet.start("orphaned");
    try {
      const logs: string[] = [];
      const running = sandbox.execute(
        "console.log('started'); await new Promise((r) => setTimeout(r, 1500)); 1",
        {},
        {
          onLog: (entry) => logs.push(entry.message),
        },
      );
      await until(() => logs.length === 1, "the guest's first line");
      const killed = performance.now();
      await worker.kill9();
      const result = await running;
      expect({ code: result.errorCode, error: result.error }).toEqual({
        code: "SANDBOX_DISPATCH_LOST",
        error:
          "The worker that took the job gave no result within timeout + lostAfter (3000 ms), and no other worker took it over (SANDBOX_DISPATCH_LOST)",
      });
      // Counted from the start message, which came just before the first line.
      expect(since(killed)).toBeLessThan(3500);
    } finally {
      await sandbox.destroy();
    }
  }, 30_000);

  it("a run given a longer options.timeout than the engine's, and a submit following it, wait by that run's timeout + lostAfter", async () => {
    const sandbox = createQueueSandbox(
      {
        connection: redis.url,
        queue: "long-run",
        ...FAST_CALLER,
        dispatchTimeout: "500ms",
        lostAfter: "300ms",
      },
      { timeout: "300ms" },
    );
    await fleet.start("long-run");
    try {
      const code = "await new Promise((r) => setTimeout(r, 1500)); 'done'";
      // The second submit of the id follows the first one's job, which runs for the first one's timeout.
      const results = await Promise.all([
        sandbox.execute(code, {}, { timeout: 3000, executionId: "long-run-1" }),
        sandbox.execute(code, {}, { executionId: "long-run-1" }),
      ]);
      expect(results.map((r) => ({ success: r.success, result: r.result, code: r.errorCode }))).toEqual([
        { success: true, result: "done", code: undefined },
        { success: true, result: "done", code: undefined },
      ]);
    } finally {
      await sandbox.destroy();
    }
  }, 30_000);

  it("another worker replays it: onLog gets each line once, the result's logs are the replay's", async () => {
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "replayed", ...FAST_CALLER },
      { timeout: "20s" },
    );
    const first = await fleet.start("replayed");
    try {
      const logs: string[] = [];
      const running = sandbox.execute(
        "console.log('one'); console.log('two'); await new Promise((r) => setTimeout(r, 2000)); console.log('three'); 3",
        {},
        { onLog: (entry) => logs.push(entry.message) },
      );
      await until(() => logs.length === 2, "the first run's two lines");
      await first.kill9();
      await fleet.start("replayed");
      const result = await running;
      expect({
        result: result.result,
        delivered: logs,
        logs: result.logs.map((entry) => entry.message),
      }).toEqual({ result: 3, delivered: ["one", "two", "three"], logs: ["one", "two", "three"] });
    } finally {
      await sandbox.destroy();
    }
  }, 40_000);
});
