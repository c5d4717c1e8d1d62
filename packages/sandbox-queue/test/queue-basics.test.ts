import { fileURLToPath } from "node:url";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueSandbox, QueueEngine } from "../src/index.js";

declare const tools: { callerPid(input: object): Promise<number>; whereAmI(input: object): Promise<unknown> };

import { hasRedisServer, type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import { startWorkerProcess, type WorkerProcess } from "./harness.js";

const redisMissing = !hasRedisServer();
if (redisMissing && process.env.CI)
  throw new Error("redis-server is required in CI (apt-get install -y redis-server)");

// Every row on both inbox transports: the Relay and the plain-queue fallback.
describe.skipIf(redisMissing).each(["relay", "queues"] as const)(
  "the queue engine (%s inboxes) against a real redis-server and a worker process",
  (transport) => {
    let redis: RedisServer;
    let worker: WorkerProcess;
    let toolWorker: WorkerProcess;
    beforeAll(async () => {
      redis = await startRedisServer();
      [worker, toolWorker] = await Promise.all([
        startWorkerProcess({
          connection: redis.url,
          queue: "basics",
          engines: ["isolate", "worker"],
          transport,
        }),
        startWorkerProcess({
          connection: redis.url,
          queue: "worker-tools",
          engines: ["worker"],
          transport,
          toolsModule: fileURLToPath(new URL("./fixtures/worker-tools.mjs", import.meta.url)),
        }),
      ]);
    });
    afterAll(async () => {
      await Promise.all([worker?.terminate(), toolWorker?.terminate()]);
      await redis?.stop();
    });

    it("runs 2 + 3 remotely and the result comes back as a local one would", async () => {
      const sandbox = createQueueSandbox(
        { connection: redis.url, queue: "basics", transport },
        { timeout: "5s" },
      );
      try {
        const result = await sandbox.execute("console.log('hi'); new Map([[1, new Date(0)]])");
        expect(result).toMatchObject({
          success: true,
          result: new Map([[1, new Date(0)]]),
          logs: [{ level: "log", message: "hi" }],
        });
      } finally {
        await sandbox.destroy();
      }
    });

    it("answers tool calls in the caller: the tool runs here, once per call", async () => {
      const ran: unknown[] = [];
      const sandbox = createQueueSandbox(
        { connection: redis.url, queue: "basics", transport },
        {
          timeout: "5s",
          tools: {
            add: {
              description: "adds",
              inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
              execute: async (input: { a: number; b: number }) => {
                ran.push(input);
                return input.a + input.b;
              },
            },
          },
        },
      );
      try {
        const result = await sandbox.execute(
          "const x = await tools.add({ a: 2, b: 3 }); await tools.add({ a: x, b: 10 })",
        );
        expect(result).toMatchObject({ success: true, result: 15 });
        expect(ran).toEqual([
          { a: 2, b: 3 },
          { a: 5, b: 10 },
        ]);
      } finally {
        await sandbox.destroy();
      }
    });

    it("runs worker-side tools on the worker and caller tools in the caller, numbered as one sequence of calls", async () => {
      const sandbox = createQueueSandbox(
        { connection: redis.url, queue: "worker-tools", remoteEngine: "worker", transport },
        {
          timeout: "5s",
          tools: {
            callerPid: {
              description: "The caller's pid",
              inputSchema: { type: "object", properties: {} },
              execute: async () => process.pid,
            },
          },
        },
      );
      try {
        const result = await sandbox.executeFunction(
          async () => [await tools.callerPid({}), await tools.whereAmI({})],
          [],
          { executionId: `mixed-${transport}` },
        );
        expect(result).toMatchObject({
          success: true,
          result: [process.pid, { pid: toolWorker.child.pid, id: `mixed-${transport}#2` }],
        });
      } finally {
        await sandbox.destroy();
      }
    });

    it("carries the registered modules as the engine holds them: data as codec text (a Map, a Date, a BigInt arrive as registered), source with its TypeScript erased", async () => {
      const engine = new QueueEngine(parseEngineLimits({ timeout: "5s" }), {
        connection: redis.url,
        queue: "basics",
        transport,
      });
      try {
        engine.registerModule({ name: "table", exports: { rows: new Map([["a", new Date(0)]]), big: 10n } });
        engine.registerModule({
          name: "greet",
          source: "module.exports = (name: string): string => 'hi ' + name;",
          language: "typescript",
        });
        const result = await engine.execute("[table.rows, table.big, greet('x')]");
        expect(result).toMatchObject({
          success: true,
          result: [new Map([["a", new Date(0)]]), 10n, "hi x"],
        });
      } finally {
        await engine.destroy();
      }
    });

    it("destroy() ends a running job in its own words, once however often it is called, and refuses use after it", async () => {
      const engine = new QueueEngine(parseEngineLimits({ timeout: "5s" }), {
        connection: redis.url,
        queue: "basics",
        transport,
      });
      const running = engine.execute("await new Promise((resolve) => setTimeout(resolve, 1000)); 1");
      await new Promise((resolve) => setTimeout(resolve, 200));
      const destroyed = engine.destroy();
      expect(engine[Symbol.asyncDispose]()).toBe(destroyed);
      await destroyed;
      expect({
        running: (await running).error,
        after: (await engine.execute("1")).error,
      }).toEqual({
        running: "The sandbox was destroyed while the job ran (SANDBOX_ENGINE_DISPOSED)",
        after: "The queue engine was destroyed; create a new sandbox (SANDBOX_ENGINE_DISPOSED)",
      });
      expect(() => engine.registerModule({ name: "m", exports: {} })).toThrow(
        "The queue engine was destroyed; create a new sandbox (SANDBOX_ENGINE_DISPOSED)",
      );
    });

    it("refuses a job whose caller defines a tool the worker defines too, naming it", async () => {
      const sandbox = createQueueSandbox(
        { connection: redis.url, queue: "worker-tools", remoteEngine: "worker", transport },
        {
          timeout: "5s",
          tools: {
            whereAmI: { description: "x", inputSchema: { type: "object" }, execute: async () => "caller" },
          },
        },
      );
      try {
        const result = await sandbox.execute("await tools.whereAmI({})");
        expect({ code: result.errorCode, error: result.error }).toEqual({
          code: "SANDBOX_INVALID_CONFIG",
          error:
            'tools "whereAmI": defined both by the caller and on this worker; rename one side (SANDBOX_INVALID_CONFIG)',
        });
      } finally {
        await sandbox.destroy();
      }
    });
  },
);

describe.skipIf(redisMissing)("inbox transports", () => {
  it("a worker on the other transport refuses the job, naming both, and the caller still gets the result", async () => {
    const redis = await startRedisServer();
    const worker = await startWorkerProcess({
      connection: redis.url,
      queue: "mixed",
      engines: ["worker"],
      transport: "queues",
    });
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "mixed", remoteEngine: "worker", pollInterval: "100ms" },
      { timeout: "5s" },
    );
    try {
      const result = await sandbox.execute("1");
      expect({ code: result.errorCode, error: result.error }).toEqual({
        code: "SANDBOX_INVALID_CONFIG",
        error:
          'The caller\'s inbox uses transport "relay" and this worker "queues"; give both the same transport (SANDBOX_INVALID_CONFIG)',
      });
    } finally {
      await sandbox.destroy();
      await worker.terminate();
      await redis.stop();
    }
  });
});

describe("an unreachable Redis", () => {
  it("resolves SANDBOX_ENGINE_UNAVAILABLE within dispatchTimeout, and destroy() does not wait for it", async () => {
    const sandbox = createQueueSandbox(
      { connection: "unix:///nonexistent/redis.sock", dispatchTimeout: "500ms" },
      { timeout: "2s" },
    );
    const started = performance.now();
    const result = await sandbox.execute("1");
    const resolvedMs = performance.now() - started;
    await sandbox.destroy();
    expect({ code: result.errorCode, error: result.error, prompt: resolvedMs < 2000 }).toEqual({
      code: "SANDBOX_ENGINE_UNAVAILABLE",
      error: "Cannot reach the queue's Redis within dispatchTimeout (500 ms) (SANDBOX_ENGINE_UNAVAILABLE)",
      prompt: true,
    });
    expect(performance.now() - started).toBeLessThan(4000);
  });
});
