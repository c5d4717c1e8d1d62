import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { z } from "zod";
import type { SandboxWorkerOptions } from "../src/index.js";
import { hasRedisServer } from "../src/testing/redis-server.js";
import { startTestProcess, startWorkerProcess, type TestProcess, type WorkerProcess } from "./harness.js";

// What the failure-semantics tests share: short BullMQ intervals, processes that are always stopped, waits with a deadline.

export const redisMissing = !hasRedisServer();
if (redisMissing && process.env.CI)
  throw new Error("redis-server is required in CI (apt-get install -y redis-server)");

/** Worker settings short enough for a test: a dead worker's job is taken over within ~2 s. */
export const FAST_WORKER = { lockDuration: "1s", stalledInterval: "500ms", lease: "1s" } as const;
/** Caller settings to match: a lost job is noticed within 200 ms, a dead caller within 1 s. */
export const FAST_CALLER = { lease: "1s", pollInterval: "200ms" } as const;

/** Wait until `check()` holds, polling every 25 ms; throws naming `what` after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 15_000,
  every = 25,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}

/** Milliseconds since `start` (a `performance.now()`). */
export const since = (start: number) => Math.round(performance.now() - start);

/** Worker processes started by a test file; `stopAll()` in afterAll ends every one still running. */
export function workerFleet(connection: () => string) {
  const started: WorkerProcess[] = [];
  return {
    async start(
      queue: string,
      options: Partial<SandboxWorkerOptions> & { exitByItself?: boolean } = {},
    ): Promise<WorkerProcess> {
      const worker = await startWorkerProcess({
        connection: connection(),
        queue,
        engines: ["isolate"],
        concurrency: 1,
        ...FAST_WORKER,
        ...options,
      });
      started.push(worker);
      return worker;
    },
    async stopAll(): Promise<void> {
      await Promise.all(
        started
          .splice(0)
          .map((worker) =>
            worker.child.exitCode === null && worker.child.signalCode === null
              ? worker.kill9()
              : Promise.resolve(),
          ),
      );
    },
  };
}

/** A caller-side tool that records every input it ran with and answers `answer(input)`. */
export function recordingTool<T>(answer: (input: Record<string, unknown>) => T = () => null as T) {
  const ran: Record<string, unknown>[] = [];
  return {
    ran,
    tool: {
      description: "records its input",
      inputSchema: z.record(z.string(), z.unknown()),
      execute: async (input: Record<string, unknown>) => {
        ran.push(input);
        return answer(input);
      },
    },
  };
}

/** BullMQ's own view of a queue, to see what Redis holds (job states and counts). */
export function queueView(connection: string, name: string): Queue {
  const queue = new Queue(name, { connection: { path: new URL(connection).pathname }, prefix: "sandbox" });
  queue.on("error", () => undefined);
  return queue;
}

const CALLER = fileURLToPath(new URL("./fixtures/caller-process.mjs", import.meta.url));

/** A caller in a process of its own (createQueueSandbox from dist): `kill -9` takes its inbox away. */
export function startCallerProcess(options: {
  queue: Record<string, unknown>;
  config: Record<string, unknown>;
  code: string;
  exitOnLog?: boolean;
  destroyOnSignal?: boolean;
}): TestProcess {
  return startTestProcess(CALLER, options);
}
