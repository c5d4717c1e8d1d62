import { afterAll, describe, expect, it } from "vitest";
import { createQueueSandbox } from "../src/index.js";
import { type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import {
  FAST_CALLER,
  queueView,
  redisMissing,
  since,
  startCallerProcess,
  until,
  workerFleet,
} from "./failures-harness.js";
import type { TestProcess } from "./harness.js";

// Failure semantics when Redis restarts (SIGKILL, then a new redis-server on the same socket):
// without persistence every pending execution resolves SANDBOX_DISPATCH_LOST and the fleet goes on;
// with AOF a waiting job survives. Each test has a redis-server of its own.

describe.skipIf(redisMissing)("redis-server restarted", () => {
  const servers: RedisServer[] = [];
  let current: RedisServer | undefined;
  const fleet = workerFleet(() => (current as RedisServer).url);
  const serve = async (options: { appendonly?: boolean } = {}) => {
    current = await startRedisServer(options);
    servers.push(current);
    return current;
  };
  const callers: TestProcess[] = [];
  afterAll(async () => {
    await Promise.all(callers.map((caller) => caller.kill9()));
    await fleet.stopAll();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it("without persistence: a waiting and a running execution each resolve SANDBOX_DISPATCH_LOST before their deadline; the same sandbox and worker then serve new jobs", async () => {
    const redis = await serve();
    const worker = await fleet.start("restart-run", { concurrency: 1 });
    const running = createQueueSandbox(
      { connection: redis.url, queue: "restart-run", ...FAST_CALLER },
      { timeout: "30s" },
    );
    const waiting = createQueueSandbox(
      { connection: redis.url, queue: "restart-wait", dispatchTimeout: "30s", ...FAST_CALLER },
      { timeout: "30s" },
    );
    const view = queueView(redis.url, "restart-wait");
    try {
      const logs: string[] = [];
      const long = running.execute(
        "console.log('running'); while (true) await new Promise((r) => setTimeout(r, 50))",
        {},
        { onLog: (entry) => logs.push(String(entry.message)) },
      );
      const queued = waiting.execute("1");
      await until(() => logs.includes("running"), "the long guest to start");
      await until(async () => (await view.getWaitingCount()) === 1, "the job without a worker to wait");
      await view.close();
      const restarted = performance.now();
      await redis.restart();
      const [lost, lostWaiting] = await Promise.all([
        long.then((result) => ({ result, after: since(restarted) })),
        queued.then((result) => ({ result, after: since(restarted) })),
      ]);
      for (const { result } of [lost, lostWaiting]) {
        expect({ success: result.success, errorCode: result.errorCode }).toEqual({
          success: false,
          errorCode: "SANDBOX_DISPATCH_LOST",
        });
        expect(result.error).toMatch(/gone from Redis/);
      }
      // Deadlines: 30 s (timeout, dispatchTimeout); the poller asks every 200 ms once ioredis is back.
      expect(lost.after).toBeLessThan(5000);
      expect(lostWaiting.after).toBeLessThan(5000);
      // The one worker (concurrency 1) is free again and the caller's connection is back.
      const served = performance.now();
      const again = await running.execute("2 + 3");
      const servedAfter = since(served);
      expect({ success: again.success, result: again.result, error: again.error }).toEqual({
        success: true,
        result: 5,
        error: undefined,
      });
      expect(servedAfter).toBeLessThan(8000);
      expect(worker.child.exitCode).toBe(null);
    } finally {
      await running.destroy();
      await waiting.destroy();
    }
  }, 45_000);

  it("with AOF: a waiting job survives the restart, and a worker started afterwards runs it; the result reaches the caller", async () => {
    const redis = await serve({ appendonly: true });
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "durable", dispatchTimeout: "30s", ...FAST_CALLER },
      { timeout: "10s" },
    );
    const view = queueView(redis.url, "durable");
    try {
      const logs: string[] = [];
      const pending = sandbox.execute(
        "console.log('ran'); 6 * 7",
        {},
        {
          executionId: "durable-1",
          onLog: (entry) => logs.push(String(entry.message)),
        },
      );
      await until(async () => (await view.getJobState("durable-1")) === "waiting", "the job to wait");
      await view.close();
      await redis.restart();
      const restarted = performance.now();
      await fleet.start("durable");
      const result = await pending;
      // The new worker's boot and one run; the caller kept waiting through the restart.
      expect(since(restarted)).toBeLessThan(10_000);
      expect({ success: result.success, result: result.result, logs: result.logs }).toEqual({
        success: true,
        result: 42,
        logs: [expect.objectContaining({ level: "log", message: "ran" })],
      });
      expect(logs).toEqual(["ran"]);
    } finally {
      await sandbox.destroy();
    }
  }, 45_000);

  it("Redis gone for good: a worker's close() (SIGTERM) and a caller's destroy() each end within seconds, and both processes then exit by themselves", async () => {
    const redis = await serve();
    const worker = await fleet.start("gone", { exitByItself: true, drainTimeout: "1s" });
    const caller = startCallerProcess({
      queue: { connection: redis.url, queue: "gone", ...FAST_CALLER },
      config: { timeout: "5s" },
      code: "2 + 3",
      destroyOnSignal: true,
    });
    callers.push(caller);
    await until(() => caller.output().includes("result success"), "the caller's first result", 20_000);
    await redis.stop();
    const gone = performance.now();
    worker.child.kill("SIGTERM");
    caller.child.kill("SIGTERM");
    const codes = await Promise.all([worker.exited, caller.exited]);
    // Neither calls process.exit(): each ends because nothing (a timer, a reconnecting connection) is left.
    expect({
      codes,
      worker: /^closed \d+$/m.test(worker.output()),
      caller: /^destroyed \d+$/m.test(caller.output()),
    }).toEqual({
      codes: [0, 0],
      worker: true,
      caller: true,
    });
    // The drain (1 s) and up to 3 s for each part that would say goodbye to Redis.
    expect(since(gone)).toBeLessThan(12_000);
  }, 40_000);
});
