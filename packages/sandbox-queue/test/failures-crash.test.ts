import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueSandbox } from "../src/index.js";
import { type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import {
  FAST_CALLER,
  queueView,
  recordingTool,
  redisMissing,
  since,
  startCallerProcess,
  until,
  workerFleet,
} from "./failures-harness.js";
import type { TestProcess } from "./harness.js";

// Failure semantics when a process dies: a worker killed mid-job, its replay, a caller killed mid-job.
// Real worker and caller processes on a real redis-server; `kill -9` hits their pids.

describe.skipIf(redisMissing)("a process killed mid-job", () => {
  let redis: RedisServer;
  const fleet = workerFleet(() => redis.url);
  const callers: TestProcess[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await Promise.all(callers.map((caller) => caller.kill9()));
    await fleet.stopAll();
    await redis?.stop();
  });

  it("worker killed: another worker takes the job after stall detection; answered tool calls come from the caller's journal, each tool ran once", async () => {
    const step = recordingTool((input) => (input.i as number) * 10);
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "killed", ...FAST_CALLER },
      { timeout: "20s", tools: { step: step.tool } },
    );
    try {
      const first = await fleet.start("killed");
      let settled = false;
      const running = sandbox.execute(
        "const a = await tools.step({ i: 1 }); const b = await tools.step({ i: 2 }); await new Promise((r) => setTimeout(r, 3000)); a + b",
      );
      void running.then(() => {
        settled = true;
      });
      await until(() => step.ran.length === 2, "both tool calls on the first worker");
      await first.kill9();
      const killed = performance.now();
      expect(settled).toBe(false);
      await fleet.start("killed");
      const result = await running;
      const recovery = since(killed);
      expect({ success: result.success, result: result.result, error: result.error }).toEqual({
        success: true,
        result: 30,
        error: undefined,
      });
      // The replay asked for calls #1 and #2 again; the journal answered them, the tool did not run again.
      expect(step.ran).toEqual([{ i: 1 }, { i: 2 }]);
      expect(
        result.calls?.map(({ tool, input, output, status }) => ({ tool, input, output, status })),
      ).toEqual([
        { tool: "step", input: { i: 1 }, output: 10, status: "ok" },
        { tool: "step", input: { i: 2 }, output: 20, status: "ok" },
      ]);
      // The second worker's boot, the stall detection (lock 1 s, checks every 500 ms) and the guest's 3 s again.
      expect(recovery).toBeGreaterThan(3000);
      expect(recovery).toBeLessThan(12_000);
    } finally {
      await sandbox.destroy();
    }
  }, 40_000);

  it("a replay that makes a different call #1 resolves SANDBOX_REPLAY_DIVERGED; the tool ran once", async () => {
    const step = recordingTool();
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "diverged", ...FAST_CALLER },
      { timeout: "20s", tools: { step: step.tool } },
    );
    try {
      const first = await fleet.start("diverged");
      // A new UUID on every run: the replay's call #1 has other input, certainly.
      const running = sandbox.execute(
        "const id = crypto.randomUUID(); await tools.step({ id }); await new Promise((r) => setTimeout(r, 3000)); id",
      );
      await until(() => step.ran.length === 1, "call #1 on the first worker");
      await first.kill9();
      await fleet.start("diverged");
      const result = await running;
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_REPLAY_DIVERGED",
      });
      expect(result.error).toMatch(/different tool call #1 \(step/);
      expect(step.ran).toEqual([{ id: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
    } finally {
      await sandbox.destroy();
    }
  }, 40_000);

  it.each([
    { ends: "killed (kill -9)", queue: "orphaned", exitOnLog: false },
    { ends: "calling process.exit() mid-run", queue: "orphaned-exit", exitOnLog: true },
  ])(
    "caller $ends: its lease runs out, the worker aborts the guest and its only slot serves the next job long before the 60 s timeout",
    async ({ queue, exitOnLog }) => {
      const worker = await fleet.start(queue, { concurrency: 1 });
      const caller = startCallerProcess({
        queue: { connection: redis.url, queue, ...FAST_CALLER },
        config: { timeout: "60s" },
        code: "console.log('running'); while (true) await new Promise((r) => setTimeout(r, 50))",
        exitOnLog,
      });
      callers.push(caller);
      await until(() => caller.output().includes("log running"), "the orphan guest to start", 20_000);
      if (exitOnLog) expect(await caller.exited).toBe(0);
      else await caller.kill9();
      const killed = performance.now();
      const sandbox = createQueueSandbox({ connection: redis.url, queue, ...FAST_CALLER }, { timeout: "5s" });
      const view = queueView(redis.url, queue);
      try {
        const result = await sandbox.execute("2 + 3");
        const freed = since(killed);
        expect({ success: result.success, result: result.result, error: result.error }).toEqual({
          success: true,
          result: 5,
          error: undefined,
        });
        // The caller's lease is 1 s; the worker checks it every ~333 ms.
        expect(freed).toBeLessThan(8000);
        // The orphan ended as cancelled on the same, still running worker; the new job after it.
        // (A worker sends its result before BullMQ moves the job to completed: wait for that move.)
        await until(async () => (await view.getCompletedCount()) === 2, "both jobs to be completed in Redis");
        const done = await view.getCompleted();
        expect(done.map((job) => (job.returnvalue as { errorCode?: string }).errorCode ?? "success")).toEqual(
          ["success", "SANDBOX_CANCELLED"],
        );
        expect(worker.child.exitCode).toBe(null);
      } finally {
        await view.close();
        await sandbox.destroy();
      }
    },
    40_000,
  );
});
