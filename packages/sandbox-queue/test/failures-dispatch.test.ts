import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueSandbox, QueueEngine } from "../src/index.js";
import { type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import {
  FAST_CALLER,
  queueView,
  recordingTool,
  redisMissing,
  since,
  until,
  workerFleet,
} from "./failures-harness.js";

// Failure semantics around dispatch: no worker in time, too many waiting, one execution id twice,
// vm refused as a remote engine, cancellation (waiting and active), an engine the worker does not run.
// Real redis-server, real worker processes; each test has a queue of its own.

const jobCounts = ["waiting", "active", "completed", "failed", "delayed", "prioritized"] as const;

describe.skipIf(redisMissing)("dispatch failures", () => {
  let redis: RedisServer;
  const fleet = workerFleet(() => redis.url);
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await fleet.stopAll();
    await redis?.stop();
  });

  it("no worker within dispatchTimeout: SANDBOX_DISPATCH_TIMEOUT, and the job is gone (a worker started later does not run it)", async () => {
    const probe = recordingTool();
    // Polled every 20 ms, so a poll often meets a job being added or being removed: neither is a lost job.
    const sandbox = createQueueSandbox(
      {
        connection: redis.url,
        queue: "unserved",
        dispatchTimeout: "1s",
        ...FAST_CALLER,
        pollInterval: "20ms",
      },
      { timeout: "5s", tools: { probe: probe.tool } },
    );
    const view = queueView(redis.url, "unserved");
    try {
      const started = performance.now();
      const [result, ...others] = await Promise.all([
        sandbox.execute("await tools.probe({}); 1", {}, { executionId: "unserved-1" }),
        ...Array.from({ length: 30 }, () => sandbox.execute("await tools.probe({}); 1")),
      ]);
      const waited = since(started);
      expect({ success: result?.success, errorCode: result?.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_DISPATCH_TIMEOUT",
      });
      expect(new Set(others.map((other) => other.errorCode))).toEqual(new Set(["SANDBOX_DISPATCH_TIMEOUT"]));
      expect(waited).toBeGreaterThanOrEqual(1000);
      expect(waited).toBeLessThan(4000);
      expect(await view.getJobState("unserved-1")).toBe("unknown");
      await fleet.start("unserved");
      // The worker serves a new job, and only that one: the timed-out job never ran.
      const next = await sandbox.execute("await tools.probe({ next: true }); 2");
      expect(next).toMatchObject({ success: true, result: 2 });
      expect(probe.ran).toEqual([{ next: true }]);
      // The caller hears the result before BullMQ moves the job to completed.
      await until(async () => (await view.getActiveCount()) === 0, "the job to complete", 2000);
      expect(await view.getJobCounts(...jobCounts)).toEqual({
        waiting: 0,
        active: 0,
        completed: 1,
        failed: 0,
        delayed: 0,
        prioritized: 0,
      });
    } finally {
      await view.close();
      await sandbox.destroy();
    }
  });

  it("maxWaiting 2 with two jobs waiting: the third resolves SANDBOX_RATE_LIMITED at once", async () => {
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "crowded", maxWaiting: 2, ...FAST_CALLER },
      { timeout: "5s" },
    );
    const view = queueView(redis.url, "crowded");
    const stop = new AbortController();
    try {
      const waiting = [1, 2].map((n) => sandbox.execute(`${n}`, {}, { signal: stop.signal }));
      await until(async () => (await view.getWaitingCount()) === 2, "two waiting jobs");
      const started = performance.now();
      const third = await sandbox.execute("3");
      const took = since(started);
      expect({ success: third.success, errorCode: third.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_RATE_LIMITED",
      });
      expect(third.error).toMatch(/has 2 jobs waiting \(maxWaiting 2\)/);
      expect(took).toBeLessThan(500);
      stop.abort();
      expect((await Promise.all(waiting)).map((r) => r.errorCode)).toEqual([
        "SANDBOX_CANCELLED",
        "SANDBOX_CANCELLED",
      ]);
    } finally {
      await view.close();
      await sandbox.destroy();
    }
  });

  it("one execution id submitted twice at once from two sandboxes: one run, the same result; a later submit gets the stored result", async () => {
    await fleet.start("idempotent", { concurrency: 2 });
    const count = recordingTool();
    const config = { timeout: "5s", tools: { count: count.tool } };
    const address = { connection: redis.url, queue: "idempotent", ...FAST_CALLER };
    const one = createQueueSandbox(address, config);
    const two = createQueueSandbox(address, config);
    try {
      const code = "await tools.count({}); await new Promise((r) => setTimeout(r, 500)); ({ n: 42 })";
      const [a, b] = await Promise.all([
        one.execute(code, {}, { executionId: "same-id" }),
        two.execute(code, {}, { executionId: "same-id" }),
      ]);
      expect(count.ran).toEqual([{}]);
      expect(a).toMatchObject({ success: true, result: { n: 42 } });
      expect({ success: b.success, result: b.result, logs: b.logs }).toEqual({
        success: a.success,
        result: a.result,
        logs: a.logs,
      });
      const again = await two.execute(code, {}, { executionId: "same-id" });
      expect({ success: again.success, result: again.result }).toEqual({ success: true, result: { n: 42 } });
      expect(count.ran).toEqual([{}]);
    } finally {
      await one.destroy();
      await two.destroy();
    }
  });

  it("vm as the remote engine: refused unless timeout <= lockDuration / 2, by the caller's config and by the worker", async () => {
    const limits = parseEngineLimits({ timeout: 2000 });
    const vm = { connection: redis.url, queue: "vm", remoteEngine: "vm", ...FAST_CALLER };
    expect(() => new QueueEngine(limits, { ...vm, lockDuration: "3s" })).toThrow(
      expect.objectContaining({
        code: "SANDBOX_INVALID_CONFIG",
        message: expect.stringMatching(
          /engineOptions\.remoteEngine: the "vm" engine .* its timeout \(2000 ms\) must be at most half the lock duration \(3000 ms\)/,
        ),
      }),
    );
    const allowed = new QueueEngine(limits, { ...vm, lockDuration: "4s" });
    await allowed.destroy();
    // The caller believes the lock is 4 s; the worker's is 1 s: the worker refuses the 2 s job, and says why.
    await fleet.start("vm", { engines: ["vm"] });
    const sandbox = createQueueSandbox({ ...vm, lockDuration: "4s" }, { timeout: "2s" });
    try {
      const refused = await sandbox.execute("1 + 1");
      expect({ success: refused.success, errorCode: refused.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_INVALID_OPTIONS",
      });
      expect(refused.error).toMatch(
        /options\.timeout: the "vm" engine .* its timeout \(2000 ms\) must be at most half the lock duration \(1000 ms\)/,
      );
      const short = await sandbox.execute("1 + 1", {}, { timeout: 500 });
      expect(short).toMatchObject({ success: true, result: 2 });
    } finally {
      await sandbox.destroy();
    }
  });

  it("cancelling a waiting job: SANDBOX_CANCELLED at once, the job removed, a worker started later never runs it", async () => {
    const probe = recordingTool();
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "cancel-waiting", ...FAST_CALLER },
      { timeout: "5s", tools: { probe: probe.tool } },
    );
    const view = queueView(redis.url, "cancel-waiting");
    try {
      const stop = new AbortController();
      const running = sandbox.execute(
        "await tools.probe({ cancelled: true }); 1",
        {},
        {
          signal: stop.signal,
          executionId: "cancel-waiting-1",
        },
      );
      await until(async () => (await view.getWaitingCount()) === 1, "the job to wait");
      const aborted = performance.now();
      stop.abort();
      const result = await running;
      const took = since(aborted);
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_CANCELLED",
      });
      expect(took).toBeLessThan(200);
      await until(
        async () => (await view.getJobState("cancel-waiting-1")) === "unknown",
        "the cancelled job's removal",
        2000,
      );
      await fleet.start("cancel-waiting");
      const next = await sandbox.execute("await tools.probe({ next: true }); 2");
      expect(next).toMatchObject({ success: true, result: 2 });
      expect(probe.ran).toEqual([{ next: true }]);
    } finally {
      await view.close();
      await sandbox.destroy();
    }
  });

  it("cancelling an active job (isolate busy loop): SANDBOX_CANCELLED at once, the worker's only slot serves the next job promptly, no retry", async () => {
    await fleet.start("cancel-active", { concurrency: 1 });
    const started = recordingTool();
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "cancel-active", ...FAST_CALLER },
      { timeout: "30s", tools: { started: started.tool } },
    );
    const view = queueView(redis.url, "cancel-active");
    try {
      const stop = new AbortController();
      const running = sandbox.execute(
        "await tools.started({}); while (true) {}",
        {},
        {
          signal: stop.signal,
          executionId: "cancel-active-1",
        },
      );
      await until(() => started.ran.length === 1, "the guest to start");
      await new Promise((resolve) => setTimeout(resolve, 200)); // into the busy loop
      const aborted = performance.now();
      stop.abort();
      const result = await running;
      const took = since(aborted);
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_CANCELLED",
      });
      expect(took).toBeLessThan(200);
      const next = performance.now();
      expect(await sandbox.execute("2 + 3")).toMatchObject({ success: true, result: 5 });
      const freed = since(next);
      expect(freed).toBeLessThan(3000);
      // Finished on the worker as cancelled, not handed back for another attempt.
      const job = await view.getJob("cancel-active-1");
      expect({
        state: await view.getJobState("cancel-active-1"),
        attemptsMade: job?.attemptsMade,
        errorCode: (job?.returnvalue as { errorCode?: string } | undefined)?.errorCode,
      }).toEqual({ state: "completed", attemptsMade: 1, errorCode: "SANDBOX_CANCELLED" });
      expect(started.ran).toEqual([{}]);
    } finally {
      await view.close();
      await sandbox.destroy();
    }
  });

  it("cancelling a job in its first milliseconds on a worker, before the run said anything: the cancel goes out on the worker's first message", async () => {
    await fleet.start("cancel-early", { concurrency: 1 });
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "cancel-early", ...FAST_CALLER },
      { timeout: "30s" },
    );
    const view = queueView(redis.url, "cancel-early");
    try {
      const stop = new AbortController();
      const running = sandbox.execute(
        "while (true) {}",
        {},
        { signal: stop.signal, executionId: "cancel-early-1" },
      );
      // Aborted as soon as the job is active: its worker has not announced itself yet (it does after a quiet moment).
      await until(
        async () => (await view.getJobState("cancel-early-1")) === "active",
        "the job to be taken",
        15_000,
        1,
      );
      stop.abort();
      expect((await running).errorCode).toBe("SANDBOX_CANCELLED");
      // One slot: were the cancel lost, the busy loop would hold it for its 30 s timeout.
      const next = performance.now();
      expect(await sandbox.execute("2 + 3")).toMatchObject({ success: true, result: 5 });
      expect(since(next)).toBeLessThan(3000);
      const job = await view.getJob("cancel-early-1");
      expect({
        state: await view.getJobState("cancel-early-1"),
        attemptsMade: job?.attemptsMade,
        errorCode: (job?.returnvalue as { errorCode?: string } | undefined)?.errorCode,
      }).toEqual({ state: "completed", attemptsMade: 1, errorCode: "SANDBOX_CANCELLED" });
    } finally {
      await view.close();
      await sandbox.destroy();
    }
  });

  it("a worker refuses a job for an engine it does not run: SANDBOX_ENGINE_UNAVAILABLE naming both", async () => {
    await fleet.start("engines", { engines: ["worker"] });
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "engines", remoteEngine: "isolate", ...FAST_CALLER },
      { timeout: "5s" },
    );
    try {
      const result = await sandbox.execute("1");
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: "SANDBOX_ENGINE_UNAVAILABLE",
      });
      expect(result.error).toMatch(/runs only "worker"; the job asks for "isolate"/);
    } finally {
      await sandbox.destroy();
    }
  });
});
