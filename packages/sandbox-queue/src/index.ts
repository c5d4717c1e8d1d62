// @suaveplan/sandbox-queue: the same execute() on worker processes elsewhere, over BullMQ and Redis.
import {
  type CreateSandboxConfig,
  createSandbox,
  type EngineFactory,
  registerEngine,
  registeredEngines,
  type Sandbox,
} from "@suaveplan/sandbox";
import { ENGINE_NAMES, type EngineCapabilities } from "@suaveplan/sandbox-core/types";
import { QueueEngine, type QueueEngineOptions } from "./queue-engine.js";
import { builtinCapabilities } from "./remote-capabilities.js";

export type { RedisConnection } from "./connection.js";
export { QueueEngine, type QueueEngineOptions, queueCapabilities } from "./queue-engine.js";
export { builtinCapabilities } from "./remote-capabilities.js";
export { type SandboxWorker, type SandboxWorkerOptions, startSandboxWorker } from "./sandbox-worker.js";

/**
 * The queue engine's factory, for `registerEngine("queue", queueEngine)`;
 * then `createSandbox({ engine: "queue", engineOptions: { connection, … } })`.
 */
export const queueEngine = async (): Promise<EngineFactory> => {
  const known = new Map<string, EngineCapabilities | undefined>();
  for (const name of ENGINE_NAMES) known.set(name, await builtinCapabilities(name));
  return {
    create: ({ limits, options }) =>
      new QueueEngine(limits, { ...options }, known.get(String(options.remoteEngine ?? "isolate"))),
  };
};

/**
 * A sandbox whose executions run on queue workers: registers the `queue`
 * engine when it is not yet, then `createSandbox` with `engine: "queue"`.
 * Validation, tools, approval, the journal, limits and audit stay here, in the caller.
 *
 * @example
 * const sandbox = createQueueSandbox({ connection: "redis://127.0.0.1:6379" }, { timeout: "5s" });
 * const result = await sandbox.execute("2 + 3");
 */
export function createQueueSandbox(
  queue: QueueEngineOptions,
  config: Omit<CreateSandboxConfig, "engine" | "engineOptions"> = {},
): Sandbox {
  if (!registeredEngines().includes("queue")) registerEngine("queue", queueEngine);
  return createSandbox({ ...config, engine: "queue", engineOptions: { ...queue } });
}
