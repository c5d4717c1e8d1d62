import { type ChildProcess, spawn } from "node:child_process";
import { getEventListeners, once } from "node:events";
import { readFileSync } from "node:fs";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { type ProcessSpawner, SpawnEngine } from "../src/index.js";

// options.signal against real children: an abort SIGKILLs the child even while the guest loops.

function recordingSpawner(): { spawner: ProcessSpawner; children: ChildProcess[] } {
  const children: ChildProcess[] = [];
  const spawner: ProcessSpawner = (command, args, options) => {
    const child = spawn(command, args, options);
    children.push(child);
    return child;
  };
  return { spawner, children };
}

/** The process is alive (a zombie counts as gone); on Linux, where /proc tells. */
function running(pid: number | undefined): boolean {
  if (pid === undefined || process.platform !== "linux") return false;
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0] !== "Z";
  } catch {
    return false;
  }
}

function settled(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed" | "usage"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const engines: SpawnEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.destroy()));
});

describe("SpawnEngine cancellation", () => {
  it("an abort SIGKILLs a child stuck in while (true) {} and resolves SANDBOX_CANCELLED with the logs so far; no child is left", async () => {
    const { spawner, children } = recordingSpawner();
    const engine = new SpawnEngine({ spawner });
    engines.push(engine);
    await until(() => children.length === 1);
    const controller = new AbortController();
    const result = await engine.execute(
      "console.log('looping'); while (true) {}",
      {},
      { signal: controller.signal, timeout: 30_000, onLog: () => controller.abort() },
    );
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.CANCELLED,
      error: "Execution was cancelled (SANDBOX_CANCELLED)",
      logs: [{ level: "log", message: "looping" }],
    });
    expect(result.duration).toBeLessThan(5_000);
    const [cancelled] = children as [ChildProcess];
    if (cancelled.exitCode === null && cancelled.signalCode === null) await once(cancelled, "exit");
    expect({
      signalCode: cancelled.signalCode,
      running: running(cancelled.pid),
      listeners: getEventListeners(controller.signal, "abort"),
    }).toEqual({ signalCode: "SIGKILL", running: false, listeners: [] });
    // The spare supply goes on: the next call runs in a freshly pre-started child.
    await until(() => children.length === 2);
    const after = await engine.execute("'after cancel'");
    expect({ ...settled(after), children: children.length }).toStrictEqual({
      success: true,
      result: "after cancel",
      logs: [],
      children: 2,
    });
  });

  it("an already-aborted signal resolves SANDBOX_CANCELLED without taking a child", async () => {
    const { spawner, children } = recordingSpawner();
    const engine = new SpawnEngine({ spawner });
    engines.push(engine);
    await until(() => children.length === 1);
    const result = await engine.execute("console.log('ran'); 1", {}, { signal: AbortSignal.abort() });
    expect(result).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.CANCELLED,
      error: "Execution was cancelled before it started (SANDBOX_CANCELLED)",
      logs: [],
      duration: 0,
    });
    const next = await engine.execute("'spare still there'");
    expect({ result: next.result, children: children.length }).toEqual({
      result: "spare still there",
      children: 1,
    });
  });

  it("an abort while a host call is pending ends the run at once; the late reply goes nowhere", async () => {
    const engine = new SpawnEngine({ preStart: false });
    engines.push(engine);
    const controller = new AbortController();
    let answer: ((value: unknown) => void) | undefined;
    const pending = engine.execute(
      "const v = await tools.slow(); console.log('after', v); v",
      {},
      {
        signal: controller.signal,
        timeout: 30_000,
        hostCalls: {
          names: ["slow"],
          call: () => {
            setImmediate(() => controller.abort());
            return new Promise((resolve) => {
              answer = resolve;
            });
          },
        },
      },
    );
    const result = await pending;
    answer?.(42);
    expect({ ...settled(result), toolCalls: result.usage?.toolCalls }).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.CANCELLED,
      error: "Execution was cancelled (SANDBOX_CANCELLED)",
      logs: [],
      toolCalls: 1,
    });
  });

  it("removes its abort listener when the run ends normally", async () => {
    const engine = new SpawnEngine({ preStart: false });
    engines.push(engine);
    const controller = new AbortController();
    const result = await engine.execute("6 * 7", {}, { signal: controller.signal });
    expect({ result: result.result, listeners: getEventListeners(controller.signal, "abort") }).toEqual({
      result: 42,
      listeners: [],
    });
  });
});
