import { readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { SpawnEngine } from "../src/index.js";

// The first layer: guest code inside the runner's vm context. Each test is
// named after the technique; every attempt must stay inside the guest realm.

const engine = new SpawnEngine({ timeout: 5_000 });
afterAll(() => engine.destroy());

async function evaluate(code: string): Promise<unknown> {
  const result = await engine.execute(code);
  return result.success ? { value: result.result } : { error: result.error };
}

describe("escapes from the vm context", () => {
  it("host globals: process, require, module, Buffer, fetch are absent", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "[typeof process, typeof require, typeof module, typeof Buffer, typeof fetch, typeof globalThis.process]",
      ),
    ).toEqual({ value: ["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"] });
  });

  it("constructor.constructor of an injected function (console.log) stays in the guest realm and cannot compile", async () => {
    expect.assertions(2);
    expect(
      await evaluate(
        "[console.log.constructor === Function, setTimeout.constructor === Function, Object.getPrototypeOf(console) === Object.prototype]",
      ),
    ).toEqual({ value: [true, true, true] });
    expect(await evaluate("console.log.constructor('return process')()")).toEqual({
      error: "EvalError: Code generation from strings disallowed for this context",
    });
  });

  it("eval, new Function and string timers are refused", async () => {
    expect.assertions(3);
    expect(await evaluate("eval('1')")).toEqual({
      error: "EvalError: Code generation from strings disallowed for this context",
    });
    expect(await evaluate("new Function('return this')()")).toEqual({
      error: "EvalError: Code generation from strings disallowed for this context",
    });
    expect(await evaluate("setTimeout('1', 1)")).toEqual({
      error: 'TypeError: The "callback" argument must be of type function',
    });
  });

  it("dynamic import() rejects with a guest-realm error (no host TypeError to climb)", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "import('node:fs').then(() => 'imported', (e) => [e instanceof TypeError, e.constructor.constructor === Function, e.message])",
      ),
    ).toEqual({ value: [true, true, "import() is not available in the sandbox"] });
  });

  it("Error.prepareStackTrace call sites expose no host receiver or function", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "Error.prepareStackTrace = (e, frames) => frames; const frames = new Error().stack; [frames.length > 1, frames instanceof Array, frames.every((f) => f.getThis() === undefined && f.getFunction() === undefined)]",
      ),
    ).toEqual({ value: [true, true, true] });
  });

  it("arguments.callee.caller is unavailable: guest code and modules run in strict mode", async () => {
    expect.assertions(2);
    expect(await evaluate("(function () { return arguments.callee.caller })()")).toEqual({
      error:
        "TypeError: 'caller', 'callee', and 'arguments' properties may not be accessed on strict mode functions or the arguments objects for calls to them",
    });
    engine.registerModule({
      name: "probe",
      source: "module.exports = (function () { return this })() === undefined;",
    });
    expect(await evaluate("probe")).toEqual({ value: true });
    engine.unregisterModule("probe");
  });

  it("timer handles are plain numbers, not host Timeout objects", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "const id = setInterval(() => {}, 1); clearInterval(id); [typeof setTimeout(() => {}, 1), typeof id]",
      ),
    ).toEqual({
      value: ["number", "number"],
    });
  });

  it("hostile results (throwing Proxy traps, throwing toJSON) fail as guest errors", async () => {
    expect.assertions(2);
    expect(await evaluate("new Proxy({}, { ownKeys() { throw new Error('trap') } })")).toEqual({
      error: "Error: trap",
    });
    expect(await evaluate("({ toJSON() { throw new RangeError('no') } })")).toEqual({
      error: "RangeError: no",
    });
  });

  it("tampering with guest intrinsics does not change how the result is encoded", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "JSON.stringify = () => '\"forged\"'; Object.keys = () => []; Array.isArray = () => false; Object.prototype.toJSON = undefined; ({ kept: [1, 2] })",
      ),
    ).toEqual({ value: { kept: [1, 2] } });
  });
});

describe("escapes past the permission model (a guest that got out of the vm context)", () => {
  it("trace_events file writes: node_trace.*.log never lands in the working directory", async () => {
    expect.assertions(2);
    const traceFiles = (): string[] =>
      readdirSync(process.cwd()).filter((name) => /^node_trace\..*\.log$/.test(name));
    const before = new Set(traceFiles());
    const probe = new SpawnEngine({
      runnerPath: fileURLToPath(new URL("./fixtures/trace-events-runner.mjs", import.meta.url)),
      preStart: false,
    });
    try {
      expect((await probe.execute("0")).result).toBe("traced");
    } finally {
      await probe.destroy();
    }
    const created = traceFiles().filter((name) => !before.has(name));
    for (const name of created) rmSync(name, { force: true });
    expect(created).toEqual([]);
  });
});
