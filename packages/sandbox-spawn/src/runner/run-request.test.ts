import { performance } from "node:perf_hooks";
import { truncationSentinel } from "@suaveplan/sandbox-core/resource-limiter";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import type { SandboxOptions } from "@suaveplan/sandbox-core/types";
import {
  answerCall,
  buildExecutionRequest,
  type CallReply,
  createHostCodec,
  type ExecutionRequest,
  ModuleRegistry,
} from "@suaveplan/sandbox-guest";
import { describe, expect, it } from "vitest";
import type { FrameSink } from "./fd-sink.js";
import { type RunnerFrame, SELF_DEADLINE_GRACE_MS } from "./protocol.js";
import { type RunRequestOptions, runRequest, warmUp } from "./run-request.js";

// The runner's logic in this process (real vm contexts on the shared runtime); the
// spawned runner is covered end to end in spawn-engine.test.ts and the conformance suite.

const codec = createHostCodec();

function request(
  code: string,
  options?: SandboxOptions,
  context?: Record<string, unknown>,
  modules = new ModuleRegistry(),
): ExecutionRequest {
  const built = buildExecutionRequest(code, context, options, parseEngineLimits(), modules);
  if (!built.ok) throw new Error(built.result.error);
  return built.request;
}

interface Written {
  frame: RunnerFrame;
  at: number;
}

async function run(
  input: ExecutionRequest,
  options?: RunRequestOptions,
): Promise<{ frames: RunnerFrame[]; written: Written[] }> {
  const written: Written[] = [];
  const sink: FrameSink = {
    write: (frame) => written.push({ frame: structuredClone(frame), at: performance.now() }),
  };
  await runRequest(input, sink, options);
  return { frames: written.map((entry) => entry.frame), written };
}

/** The frames with the done frame's memoryUsed checked and dropped. */
function withoutMemory(frames: RunnerFrame[]): unknown[] {
  return frames.map((frame) => {
    if (frame.type !== "done") return frame;
    expect(typeof frame.memoryUsed).toBe("number");
    return { type: "done", outcome: frame.outcome };
  });
}

describe("runRequest", () => {
  it("writes start, a log frame per console line, then done with the codec text of the result", async () => {
    const modules = new ModuleRegistry();
    modules.register({ name: "lib", exports: { b: 10 } });
    modules.register({ name: "twice", source: "module.exports = (n) => n * 2;" });
    const { frames } = await run(
      request(
        "console.info('sum', a + lib.b + twice(2), { a }); [new Date(0), new Map([[1, 2n]]), undefined]",
        undefined,
        { a: 1 },
        modules,
      ),
    );
    expect(withoutMemory(frames)).toStrictEqual([
      { type: "start" },
      { type: "log", level: "info", message: "sum 15 { a: 1 }" },
      { type: "done", outcome: { kind: "value", text: expect.any(String) } },
    ]);
    const done = frames.at(-1) as Extract<RunnerFrame, { type: "done" }>;
    expect(done.outcome.kind === "value" && codec.decode(done.outcome.text)).toStrictEqual([
      new Date(0),
      new Map([[1, 2n]]),
      undefined,
    ]);
  });

  it("writes each console line while the guest still runs", async () => {
    const { written } = await run(
      request("console.log('early'); new Promise((done) => setTimeout(() => done('late'), 100))"),
    );
    expect(written.map(({ frame }) => frame.type)).toEqual(["start", "log", "done"]);
    const [, log, done] = written as [Written, Written, Written];
    expect(done.at - log.at).toBeGreaterThanOrEqual(90);
  });

  it("reports the guest's failures as the shared outcome kinds", async () => {
    const outcomes = await Promise.all(
      ["throw new TypeError('boom')", "let x = ;", "({ fn() {} })", "throw 'plain'"].map(
        async (code) =>
          ((await run(request(code))).frames.at(-1) as Extract<RunnerFrame, { type: "done" }>).outcome,
      ),
    );
    expect(outcomes).toStrictEqual([
      {
        kind: "error",
        error: {
          name: "TypeError",
          message: "boom",
          stack: "TypeError: boom\n    at sandbox.js:1:7",
          line: 1,
          column: 7,
        },
      },
      {
        kind: "syntax",
        error: { name: "SyntaxError", message: "Unexpected token ';'", stack: "", line: 1, column: 9 },
      },
      { kind: "untransferable", path: "result.fn", what: "function" },
      { kind: "error", error: { name: "", message: "'plain'", stack: "" } },
    ]);
  });

  it("cuts console output at maxOutputSize inside the child, the sentinel included", async () => {
    const { frames } = await run(
      request("console.log('0123456789'); console.log('abcdefghij'); console.log('never'); 1", {
        maxOutputSize: 16,
      }),
    );
    expect(frames.filter((frame) => frame.type === "log")).toStrictEqual([
      { type: "log", level: "log", message: "0123456789" },
      { type: "log", level: "log", message: "abcdef" },
      { type: "log", level: "warn", message: truncationSentinel(16) },
    ]);
  });

  it("cancels every timer when the run ends: no frame after done", async () => {
    const { frames } = await run(
      request(
        "setTimeout(() => console.log('fired'), 20); setInterval(() => console.log('tick'), 5); setTimeout(() => { throw new Error('stop') }, 40); 'value'",
      ),
    );
    const seen = frames.length;
    expect(frames.at(-1)).toMatchObject({
      type: "done",
      outcome: { kind: "error", error: { message: "stop" } },
    });
    expect(frames).toContainEqual({ type: "log", level: "log", message: "fired" });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(frames).toHaveLength(seen);
  });

  it("bounds itself SELF_DEADLINE_GRACE_MS after the request's timeout, for a child whose host died", async () => {
    for (const code of ["while (true) {}", "new Promise(() => {})"]) {
      const started = performance.now();
      const { frames } = await run(request(code, { timeout: 50 }));
      expect({ code, frames: withoutMemory(frames) }).toStrictEqual({
        code,
        frames: [{ type: "start" }, { type: "done", outcome: { kind: "timeout", timeoutMs: 50 } }],
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(50 + SELF_DEADLINE_GRACE_MS - 10);
    }
  });

  it("does not mistake a guest's imitation of the vm timeout error for a timeout", async () => {
    const { frames } = await run(
      request("throw Object.assign(new Error('fake'), { code: 'ERR_SCRIPT_EXECUTION_TIMEOUT' })", {
        timeout: 1000,
      }),
    );
    expect((frames.at(-1) as Extract<RunnerFrame, { type: "done" }>).outcome).toStrictEqual({
      kind: "error",
      error: {
        name: "Error",
        message: "fake",
        stack: "Error: fake\n    at sandbox.js:1:21",
        line: 1,
        column: 21,
      },
    });
  });
});

describe("runRequest host calls", () => {
  it("writes a call frame per tools.<name>() call and settles each with the reply it is given; done counts them", async () => {
    const hostCalls = {
      names: ["echo"],
      call: async (_name: string, input: unknown) => ({ got: input, at: new Date(5) }),
    };
    let deliver: ((reply: CallReply) => void) | undefined;
    const answers: Array<Promise<void>> = [];
    const written: RunnerFrame[] = [];
    const sink: FrameSink = {
      write: (frame) => {
        written.push(structuredClone(frame));
        if (frame.type === "call") answers.push(answerCall(frame.call, hostCalls).then((r) => deliver?.(r)));
      },
    };
    await runRequest(
      request("const r = await tools.echo(new Map([[1, 'a']])); [r.got.get(1), r.at.getTime()]", {
        hostCalls,
      }),
      sink,
      {
        replies: (next) => {
          deliver = next;
        },
      },
    );
    await Promise.all(answers);
    const input = codec.encode(new Map([[1, "a"]]), "input", 1024);
    const output = codec.encode({ got: new Map([[1, "a"]]), at: new Date(5) }, "output", 1024);
    const done = written.at(-1) as Extract<RunnerFrame, { type: "done" }>;
    expect(written.slice(0, -1)).toStrictEqual([
      { type: "start" },
      { type: "call", call: { id: 1, name: "echo", text: input } },
    ]);
    expect({ ...done, memoryUsed: undefined, cpuMs: undefined, peakBytes: undefined }).toStrictEqual({
      type: "done",
      outcome: { kind: "value", text: codec.encode(["a", 5], "result", 1024) },
      memoryUsed: undefined,
      cpuMs: undefined,
      toolCalls: 1,
      toolBytes: (input.length + output.length) * 2,
      peakBytes: undefined,
    });
    expect(done.cpuMs).toBeGreaterThan(0);
  });

  it("offers no tools global and writes no call frame when the request offers no tools", async () => {
    const { frames } = await run(request("typeof tools"), { replies: () => expect.unreachable() });
    expect(withoutMemory(frames)).toStrictEqual([
      { type: "start" },
      { type: "done", outcome: { kind: "value", text: codec.encode("undefined", "result", 1024) } },
    ]);
  });
});

describe("warmUp", () => {
  it("runs a throwaway request to completion and leaves no timer or handle behind", async () => {
    const before = process.getActiveResourcesInfo();
    await warmUp();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // What is active now and was not before (a timer an earlier test left may end meanwhile).
    const left = [...before];
    const added = process.getActiveResourcesInfo().filter((kind) => {
      const at = left.indexOf(kind);
      if (at === -1) return true;
      left.splice(at, 1);
      return false;
    });
    expect(added).toEqual([]);
  });
});
