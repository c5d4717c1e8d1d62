import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQueueSandbox } from "../src/index.js";
import { hasRedisServer, type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import { startWorkerProcess, type WorkerProcess } from "./harness.js";

const redisMissing = !hasRedisServer();
if (redisMissing && process.env.CI)
  throw new Error("redis-server is required in CI (apt-get install -y redis-server)");

describe.skipIf(redisMissing)("the queue engine against a real redis-server and a worker process", () => {
  let redis: RedisServer;
  let worker: WorkerProcess;
  beforeAll(async () => {
    redis = await startRedisServer();
    worker = await startWorkerProcess({
      connection: redis.url,
      queue: "basics",
      engines: ["isolate", "worker"],
    });
  });
  afterAll(async () => {
    await worker?.terminate();
    await redis?.stop();
  });

  it("runs 2 + 3 remotely and the result comes back as a local one would", async () => {
    const sandbox = createQueueSandbox({ connection: redis.url, queue: "basics" }, { timeout: "5s" });
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
      { connection: redis.url, queue: "basics" },
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
});
