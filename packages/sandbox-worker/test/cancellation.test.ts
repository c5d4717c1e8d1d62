import { subscribe, unsubscribe } from "node:diagnostics_channel";
import { getEventListeners } from "node:events";
import type { Worker } from "node:worker_threads";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { WorkerEngine } from "../src/index.js";

// options.signal on real workers from the built entry (`pnpm build` first). The workers
// the engine starts are observed through node's `worker_threads` diagnostics channel.

const engines: WorkerEngine[] = [];
const started: Worker[] = [];
const onWorker = (message: unknown) => started.push((message as { worker: Worker }).worker);
beforeAll(() => subscribe("worker_threads", onWorker));
afterAll(() => unsubscribe("worker_threads", onWorker));
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
  started.length = 0;
});

function makeEngine(): WorkerEngine {
  const engine = new WorkerEngine();
  engines.push(engine);
  return engine;
}

function stable(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed" | "usage"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("WorkerEngine cancellation", () => {
  it("resolves SANDBOX_CANCELLED for an already-aborted signal without taking a worker", async () => {
    const engine = makeEngine();
    while (started.length === 0) await tick(); // the spare is booting
    const result = await engine.execute("console.log('ran'); 1", {}, { signal: AbortSignal.abort() });
    await tick(); // a taken spare would have started its replacement by now
    expect({ result, workersStarted: started.length }).toStrictEqual({
      result: {
        success: false,
        error: "Execution was cancelled before it started (SANDBOX_CANCELLED)",
        errorCode: SANDBOX_CODES.CANCELLED,
        duration: 0,
        logs: [],
      },
      workersStarted: 1,
    });
  });

  it("terminates the worker of a sync while (true) {} at once on abort, keeping its logs, and runs the next call", async () => {
    const engine = makeEngine();
    const controller = new AbortController();
    let spinning: () => void = () => {};
    const inLoop = new Promise<void>((resolve) => {
      spinning = resolve;
    });
    const pending = engine.execute(
      "console.log('spinning'); while (true) {}",
      {},
      { signal: controller.signal, timeout: 30_000, onLog: () => spinning() },
    );
    // execute takes its worker synchronously: the first one started (the spare follows it).
    const running = started[0] as Worker;
    const exited = new Promise<number>((resolve) => running.once("exit", resolve));
    await inLoop;
    const abortedAt = performance.now();
    controller.abort();
    const result = await pending;
    const resolvedAfterMs = performance.now() - abortedAt;
    expect({
      result: stable(result),
      exitCode: await exited,
      exitedThread: running.threadId,
      abortListeners: getEventListeners(controller.signal, "abort"),
    }).toStrictEqual({
      result: {
        success: false,
        error: "Execution was cancelled (SANDBOX_CANCELLED)",
        errorCode: SANDBOX_CODES.CANCELLED,
        logs: [{ level: "log", message: "spinning" }],
      },
      exitCode: 1,
      exitedThread: -1,
      abortListeners: [],
    });
    expect(resolvedAfterMs).toBeLessThan(1000);
    expect(stable(await engine.execute("'after cancel'"))).toStrictEqual({
      success: true,
      result: "after cancel",
      logs: [],
    });
  });

  it("removes its abort listener when the run ends on its own", async () => {
    const engine = makeEngine();
    const controller = new AbortController();
    const result = await engine.execute("21 * 2", {}, { signal: controller.signal });
    controller.abort(); // after the run: changes nothing
    expect({
      result: stable(result),
      abortListeners: getEventListeners(controller.signal, "abort"),
    }).toStrictEqual({
      result: { success: true, result: 42, logs: [] },
      abortListeners: [],
    });
  });

  it("ends a run waiting on a host call with SANDBOX_CANCELLED and counts the call", async () => {
    const engine = makeEngine();
    const controller = new AbortController();
    const result = await engine.execute(
      "await tools.wait(1); 'late'",
      {},
      {
        signal: controller.signal,
        hostCalls: {
          names: ["wait"],
          call: () => {
            controller.abort();
            return new Promise(() => {});
          },
        },
      },
    );
    expect({ ...stable(result), toolCalls: result.usage?.toolCalls }).toStrictEqual({
      success: false,
      error: "Execution was cancelled (SANDBOX_CANCELLED)",
      errorCode: SANDBOX_CODES.CANCELLED,
      logs: [],
      toolCalls: 1,
    });
  });
});
