import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { afterAll, beforeAll } from "vitest";
import { builtinCapabilities, QueueEngine } from "../src/index.js";
import { hasRedisServer, type RedisServer, startRedisServer } from "../src/testing/redis-server.js";
import { startWorkerProcess, type WorkerProcess } from "./harness.js";

// The engine contract and the parity table through the queue: one worker process on the isolate engine.
if (!hasRedisServer() && process.env.CI)
  throw new Error("redis-server is required in CI (apt-get install -y redis-server)");

let redis: RedisServer | undefined;
let worker: WorkerProcess | undefined;
beforeAll(async () => {
  if (!hasRedisServer()) return;
  redis = await startRedisServer();
  worker = await startWorkerProcess({
    connection: redis.url,
    queue: "conformance",
    engines: ["isolate"],
    concurrency: 8,
  });
}, 60_000);
afterAll(async () => {
  await worker?.terminate();
  await redis?.stop();
});

if (hasRedisServer()) {
  const isolate = await builtinCapabilities("isolate");
  runEngineConformance("queue (one isolate worker)", (limits) => {
    if (redis === undefined) throw new Error("redis-server did not start");
    const options = {
      connection: redis.url,
      queue: "conformance",
      remoteEngine: "isolate",
      pollInterval: "200ms",
    };
    return new QueueEngine(parseEngineLimits(limits ?? {}), options, isolate);
  });
}
