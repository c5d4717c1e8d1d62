import type { HostCalls, LogEntry } from "@suaveplan/sandbox-core/types";
import { createHostCodec, type ExecutionRequest } from "@suaveplan/sandbox-guest";
import { afterEach, describe, expect, it } from "vitest";
import { BACKSTOP_GRACE_MS, type RunEnd, WorkerRun } from "./worker-run.js";
import { startWorkerThread, type WorkerThread } from "./worker-thread.js";

// Real worker threads running stand-in entries: what no guest can make the real
// entry do (die, stay silent, never boot) is what the host side must still end.

const MIB = 1024 * 1024;
const REQUEST: ExecutionRequest = {
  code: "1",
  contextText: "",
  modulesText: "",
  sourceModules: [],
  timeoutMs: 100,
  maxOutputSize: 1024,
  maxLogLines: 10,
  maxTimers: 1,
  maxTimerCreations: 1,
  maxResultBytes: MIB,
  maxCallBytes: MIB,
};
const PORT = "const port = require('node:worker_threads').parentPort;";
const codec = createHostCodec();

const threads: WorkerThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((thread) => thread.worker.terminate()));
});

function run(
  entry: string,
  options: { startupTimeoutMs?: number; onLog?: (entry: LogEntry) => void; hostCalls?: HostCalls } = {},
): { result: Promise<RunEnd>; run: WorkerRun; ended: WorkerThread[] } {
  const thread = startWorkerThread(32 * MIB, () => {}, entry);
  threads.push(thread);
  const ended: WorkerThread[] = [];
  const workerRun = new WorkerRun(
    thread,
    REQUEST,
    options.onLog,
    (done) => {
      ended.push(done);
      void done.worker.terminate();
    },
    options.startupTimeoutMs ?? 10_000,
    options.hostCalls,
  );
  return { result: workerRun.result, run: workerRun, ended };
}

describe("WorkerRun", () => {
  it("posts the request once the worker is ready, streams its log events and ends with its done outcome", async () => {
    const seen: LogEntry[] = [];
    const { result, ended } = run(
      `${PORT} port.on("message", (message) => {
        port.postMessage({ type: "log", level: "info", message: "got " + message.request.code });
        port.postMessage({ type: "log", level: "nonsense", message: "dropped" });
        port.postMessage({ type: "done", outcome: { kind: "value", text: "2" }, memoryUsed: 7, cpuMs: 3, toolCalls: 0, toolBytes: 0 });
      }); port.postMessage({ type: "ready" });`,
      { onLog: (entry) => seen.push(entry) },
    );
    expect(await result).toStrictEqual({
      outcome: { kind: "value", text: "2" },
      logs: [{ level: "info", message: "got 1" }],
      memoryUsed: 7,
      cpuMs: 3,
      toolCalls: 0,
      toolBytes: 0,
    });
    expect(seen).toStrictEqual([{ level: "info", message: "got 1" }]);
    expect(ended).toHaveLength(1);
  });

  it("a worker that exits before it reports ends the run as a fault, keeping the logs it streamed", async () => {
    const { result } = run(
      `${PORT} port.on("message", () => { port.postMessage({ type: "log", level: "log", message: "last words" }); setTimeout(() => process.exit(7), 20); });
      port.postMessage({ type: "ready" });`,
    );
    expect(await result).toStrictEqual({
      outcome: {
        kind: "fault",
        message: "WorkerEngine: the worker thread exited with code 7 before it returned a result",
      },
      logs: [{ level: "log", message: "last words" }],
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 0,
      toolBytes: 0,
    });
  });

  it("an uncaught error in the worker ends the run as a fault naming it", async () => {
    const { result } = run(
      `${PORT} port.on("message", () => { throw new RangeError("entry bug"); }); port.postMessage({ type: "ready" });`,
    );
    expect(await result).toStrictEqual({
      outcome: { kind: "fault", message: "WorkerEngine: the worker thread failed: entry bug" },
      logs: [],
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 0,
      toolBytes: 0,
    });
  });

  it("a worker that never reports is terminated at the deadline plus the grace, as a timeout", async () => {
    const started = performance.now();
    const { result } = run(`${PORT} port.on("message", () => {}); port.postMessage({ type: "ready" });`);
    expect(await result).toStrictEqual({
      outcome: { kind: "timeout", timeoutMs: 100 },
      logs: [],
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 0,
      toolBytes: 0,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(REQUEST.timeoutMs + BACKSTOP_GRACE_MS - 5);
  });

  it("a worker that never boots fails after the startup timeout", async () => {
    const { result } = run(`${PORT} port.on("message", () => {});`, { startupTimeoutMs: 50 });
    expect(await result).toStrictEqual({
      outcome: {
        kind: "fault",
        message: "WorkerEngine: the worker did not start within 50 ms; the host may be overloaded",
      },
      logs: [],
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 0,
      toolBytes: 0,
    });
  });

  it("abort ends the run with the given outcome and ignores what the worker sends afterwards", async () => {
    const {
      result,
      run: workerRun,
      ended,
    } = run(
      `${PORT} port.on("message", () => setTimeout(() => port.postMessage({ type: "done", outcome: { kind: "value", text: "1" }, memoryUsed: 1 }), 50));
      port.postMessage({ type: "ready" });`,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    workerRun.abort({ kind: "disposed", message: "gone" });
    expect(await result).toStrictEqual({
      outcome: { kind: "disposed", message: "gone" },
      logs: [],
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 0,
      toolBytes: 0,
    });
    expect(ended).toHaveLength(1);
  });

  it("answers a forwarded call with hostCalls and posts the reply back; without a worker count it counts the call itself", async () => {
    const input = codec.encode({ when: new Date(1), tags: new Map([["a", 1]]) }, "input", MIB);
    const seen: unknown[] = [];
    const { result } = run(
      `${PORT} port.on("message", (message) => {
        if (message.type === "run") port.postMessage("1 4 echo" + ${JSON.stringify(input)});
        else port.postMessage({ type: "done", outcome: { kind: "value", text: message }, memoryUsed: 1 });
      }); port.postMessage({ type: "ready" });`,
      {
        hostCalls: {
          names: ["echo"],
          call: async (name, value, id) => {
            seen.push([name, value, id]);
            return { echoed: value };
          },
        },
      },
    );
    const output = codec.encode({ echoed: { when: new Date(1), tags: new Map([["a", 1]]) } }, "output", MIB);
    expect(await result).toStrictEqual({
      // The reply as it crossed: run 1, call 1, ok, then the codec text.
      outcome: { kind: "value", text: `1 1 1 ${output}` },
      logs: [],
      memoryUsed: 1,
      cpuMs: undefined,
      toolCalls: 1,
      toolBytes: (input.length + output.length) * 2,
    });
    expect(seen).toStrictEqual([["echo", { when: new Date(1), tags: new Map([["a", 1]]) }, "1"]]);
  });

  it("ignores a forwarded call when the run has no hostCalls", async () => {
    const { result } = run(
      `${PORT} port.on("message", (message) => {
        port.postMessage("1 4 echo1");
        setTimeout(() => port.postMessage({ type: "done", outcome: { kind: "value", text: String(message.type) }, memoryUsed: 1 }), 20);
      }); port.postMessage({ type: "ready" });`,
    );
    expect(await result).toStrictEqual({
      outcome: { kind: "value", text: "run" },
      logs: [],
      memoryUsed: 1,
      cpuMs: undefined,
      toolCalls: 0,
      toolBytes: 0,
    });
  });

  it("drops a reply that is answered after the run ended and its worker was terminated", async () => {
    const input = codec.encode(1, "input", MIB);
    let answer: ((value: unknown) => void) | undefined;
    const {
      result,
      run: workerRun,
      ended,
    } = run(
      `${PORT} port.on("message", (message) => {
        if (message.type === "run") port.postMessage("1 4 slow" + ${JSON.stringify(input)});
        else port.postMessage({ type: "log", level: "log", message: "reply reached the worker" });
      }); port.postMessage({ type: "ready" });`,
      {
        hostCalls: {
          names: ["slow"],
          call: () =>
            new Promise((resolve) => {
              answer = resolve;
            }),
        },
      },
    );
    while (answer === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    workerRun.abort({ kind: "cancelled" });
    await (ended[0] as WorkerThread).worker.terminate();
    answer(42);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await result).toStrictEqual({
      outcome: { kind: "cancelled" },
      logs: [],
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 1,
      toolBytes: input.length * 2,
    });
  });
});
