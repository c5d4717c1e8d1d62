import { describe, expect, it } from "vitest";
import type { RunnerFrame, RunnerInput } from "./protocol.js";
import { type FrameSink, parseRunnerInput, prepareRunner, warmUp } from "./runner.js";

// The runner's logic in this process (real vm contexts); the spawned runner is
// covered end to end in spawn-engine.test.ts and the conformance suite.

function capture(): FrameSink & { frames: RunnerFrame[] } {
  const frames: RunnerFrame[] = [];
  return { frames, write: (frame) => frames.push(frame) };
}

const request = (code: string, extra: Partial<RunnerInput> = {}): RunnerInput => ({
  code,
  context: {},
  modules: [],
  maxOutputSize: 1024,
  ...extra,
});

async function run(input: RunnerInput): Promise<{ output: unknown; frames: RunnerFrame[] }> {
  const sink = capture();
  const output = await prepareRunner().run(input, sink);
  return { output: { ...output, memoryUsed: typeof output.memoryUsed }, frames: sink.frames };
}

describe("parseRunnerInput", () => {
  it("accepts a request and applies defaults", () => {
    expect(parseRunnerInput('{"code":"1 + 1"}')).toEqual({
      code: "1 + 1",
      context: {},
      modules: [],
      maxOutputSize: 1024 * 1024,
    });
    expect(
      parseRunnerInput(
        '{"code":"m","context":{"a":1},"modules":[{"name":"m","exports":2}],"maxOutputSize":9}',
      ),
    ).toEqual({ code: "m", context: { a: 1 }, modules: [{ name: "m", exports: 2 }], maxOutputSize: 9 });
  });

  it("names the bad field", () => {
    const cases: Array<[string, string]> = [
      ["nope", "request: stdin is not one JSON object"],
      ["[]", "request: stdin is not one JSON object"],
      ['{"code":1}', "request.code: must be a string"],
      ['{"code":"","context":[]}', "request.context: must be an object"],
      ['{"code":"","modules":{}}', "request.modules: must be an array"],
      ['{"code":"","modules":[{"name":"a-b"}]}', "request.modules[0].name: must be a JavaScript identifier"],
      ['{"code":"","modules":[{"name":"a","source":1}]}', "request.modules[0].source: must be a string"],
      ['{"code":"","maxOutputSize":0}', "request.maxOutputSize: must be a positive integer (bytes)"],
      ['{"code":"","timeoutMs":1.5}', "request.timeoutMs: must be a positive integer (ms)"],
    ];
    for (const [text, message] of cases) expect(() => parseRunnerInput(text)).toThrow(message);
  });
});

describe("prepareRunner", () => {
  it("evaluates strict-mode code with context and modules, streaming start and log frames first", async () => {
    const { output, frames } = await run(
      request(
        "console.info('sum', a + lib.b + twice(2)); [(function () { return this; })(), typeof require, typeof process]",
        {
          context: { a: 1 },
          modules: [
            { name: "lib", exports: { b: 10 } },
            { name: "twice", source: "module.exports = (n) => n * 2;" },
          ],
        },
      ),
    );
    expect(output).toEqual({
      type: "result",
      success: true,
      result: [null, "undefined", "undefined"], // strict mode: `this` is undefined (JSON null in an array)
      memoryUsed: "number",
    });
    expect(frames).toEqual([{ type: "start" }, { type: "log", level: "info", message: "sum 15" }]);
  });

  it("forwards lines whole while they fit, cuts the first that does not just past the budget, then stops", async () => {
    const { frames } = await run(
      request("console.log('0123456789'); console.log('abcdefghij'); console.log('never'); 1", {
        maxOutputSize: 16,
      }),
    );
    expect(frames.filter((frame) => frame.type === "log")).toEqual([
      { type: "log", level: "log", message: "0123456789" },
      { type: "log", level: "log", message: "abcdefg" },
    ]);
  });

  it("ends forwarding with a truncated frame once the line cap is reached", async () => {
    const { frames } = await run(
      request("for (let i = 0; i < 5000; i++) console.log(''); 'done'", { maxOutputSize: 16 }),
    );
    expect(frames.filter((frame) => frame.type === "log")).toHaveLength(1000);
    expect(frames.filter((frame) => frame.type === "truncated")).toEqual([{ type: "truncated" }]);
  });

  it("waits for pending timers, then cancels every timer when the execution ends", async () => {
    const sink = capture();
    const output = await prepareRunner().run(
      request(
        "setTimeout(() => console.log('fired'), 20); setInterval(() => console.log('tick'), 5); setTimeout(() => { throw new Error('stop') }, 40); 'value'",
      ),
      sink,
    );
    expect({ ...output, memoryUsed: 0 }).toEqual({
      type: "result",
      success: false,
      error: "Error: stop",
      errorKind: "guest",
      memoryUsed: 0,
    });
    const seen = sink.frames.length;
    expect(sink.frames).toContainEqual({ type: "log", level: "log", message: "fired" });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(sink.frames).toHaveLength(seen);
  });

  it("describes failures in one line: syntax errors with their line, thrown values, modules, untransferable results", async () => {
    const cases: Array<[RunnerInput, string, string]> = [
      [request("let a = 1;\nlet = ;"), "SyntaxError: Unexpected strict mode reserved word (line 2)", "guest"],
      [request("throw { a: 1 }"), '{"a":1}', "guest"],
      [request("throw undefined"), "undefined", "guest"],
      [request("Promise.reject(new TypeError('nope'))"), "TypeError: nope", "guest"],
      [request("queueMicrotask(() => { throw new RangeError('micro') }); 1"), "RangeError: micro", "guest"],
      [request("eval('1')"), "EvalError: Code generation from strings disallowed for this context", "guest"],
      [
        request("1", { modules: [{ name: "bad", source: "throw new Error('load')" }] }),
        "module bad failed: Error: load",
        "guest",
      ],
      [
        request("1", { modules: [{ name: "broken", source: "module.exports = (" }] }),
        "module broken failed: SyntaxError: Unexpected token '}' (line 2)",
        "guest",
      ],
      [request("[new Date(0), () => 1]"), "result is not transferable: function", "transfer"],
    ];
    for (const [input, error, errorKind] of cases) {
      const { output } = await run(input);
      expect(output).toEqual({ type: "result", success: false, error, errorKind, memoryUsed: "number" });
    }
  });

  it("copies results as JSON data (toJSON honoured, undefined dropped like JSON)", async () => {
    const { output } = await run(request("({ when: new Date(0), skip: undefined, list: [undefined, NaN] })"));
    expect(output).toEqual({
      type: "result",
      success: true,
      result: { when: "1970-01-01T00:00:00.000Z", list: [null, null] },
      memoryUsed: "number",
    });
  });

  it("bounds itself when the host has not: top-level sync code by the vm timeout, the rest by a later deadline", async () => {
    const sync = await run(request("while (true) {}", { timeoutMs: 50 }));
    expect(sync.output).toEqual({
      type: "result",
      success: false,
      error: "Execution timed out after 50 ms",
      errorKind: "timeout",
      memoryUsed: "number",
    });
    const pending = await run(request("new Promise(() => {})", { timeoutMs: 10 }));
    expect(pending.output).toEqual({
      type: "result",
      success: false,
      error: "Execution timed out after 10 ms",
      errorKind: "timeout",
      memoryUsed: "number",
    });
    const longest = await run(
      request("new Promise((done) => setTimeout(() => done('not cut short'), 20))", {
        timeoutMs: 2_147_483_647,
      }),
    );
    expect(longest.output).toEqual({
      type: "result",
      success: true,
      result: "not cut short",
      memoryUsed: "number",
    });
    const faked = await run(
      request("throw Object.assign(new Error('fake'), { code: 'ERR_SCRIPT_EXECUTION_TIMEOUT' })", {
        timeoutMs: 1000,
      }),
    );
    expect(faked.output).toEqual({
      type: "result",
      success: false,
      error: "Error: fake",
      errorKind: "guest",
      memoryUsed: "number",
    });
  });

  it("evaluates one request per prepared runner", async () => {
    const runner = prepareRunner();
    await runner.run(request("1"), capture());
    await expect(runner.run(request("2"), capture())).rejects.toThrow(
      "runner: a prepared runner evaluates one request only",
    );
  });

  it("warmUp runs a throwaway request to completion and leaves no timer or handle behind", async () => {
    const before = process.getActiveResourcesInfo().sort();
    await warmUp();
    await new Promise((resolve) => setImmediate(resolve));
    expect(process.getActiveResourcesInfo().sort()).toEqual(before);
  });
});
