import { readdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterAll, describe, expect, it } from "vitest";
import { SpawnEngine } from "../src/index.js";

// The first layer: guest code inside the runner's vm context (the shared guest
// runtime's node:vm realm, in the child). Each test is named after the
// technique; every attempt must stay inside the guest realm.

const engine = new SpawnEngine({ timeout: 5_000 });
afterAll(() => engine.destroy());

async function evaluate(code: string): Promise<{ value: unknown } | { error: string }> {
  const result = await engine.execute(code);
  return result.success ? { value: result.result } : { error: result.error };
}

const guestError = (text: string): { error: string } => ({ error: `${text} (${SANDBOX_CODES.GUEST_ERROR})` });
const NO_CODE_GENERATION = "EvalError: Code generation from strings disallowed for this context";

describe("escapes from the vm context", () => {
  it("host globals: process, require, module, Buffer, fetch are absent", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "[typeof process, typeof require, typeof module, typeof Buffer, typeof fetch, typeof globalThis.process]",
      ),
    ).toStrictEqual({
      value: ["undefined", "undefined", "undefined", "undefined", "undefined", "undefined"],
    });
  });

  it("constructor.constructor of an injected function (console.log) stays in the guest realm and cannot compile", async () => {
    expect.assertions(2);
    expect(
      await evaluate(
        "[console.log.constructor === Function, setTimeout.constructor === Function, Object.getPrototypeOf(console) === Object.prototype]",
      ),
    ).toStrictEqual({ value: [true, true, true] });
    expect(await evaluate("console.log.constructor('return process')()")).toStrictEqual(
      guestError(`${NO_CODE_GENERATION} (line 1, column 13)`),
    );
  });

  it("eval, new Function and string timers are refused", async () => {
    expect.assertions(3);
    expect(await evaluate("eval('1')")).toStrictEqual(guestError(`${NO_CODE_GENERATION} (line 1, column 1)`));
    expect(await evaluate("new Function('return this')()")).toStrictEqual(
      guestError(`${NO_CODE_GENERATION} (line 1, column 1)`),
    );
    expect(await evaluate("setTimeout('1', 1)")).toStrictEqual(
      guestError(
        'TypeError: The "callback" argument must be of type function; code strings are not evaluated in the sandbox (line 1, column 1)',
      ),
    );
  });

  it("dynamic import() (no host TypeError to climb) is refused before any code runs, in code and in source modules", async () => {
    expect.assertions(3);
    expect(
      await evaluate(
        "import('node:fs').then(() => 'imported', (e) => [e instanceof TypeError, e.constructor.constructor === Function, e.message])",
      ),
    ).toStrictEqual({
      error: `import() and import declarations are not available in the sandbox (line 1) (${SANDBOX_CODES.CODE_BLOCKED})`,
    });
    expect(() =>
      engine.registerModule({ name: "importer", source: "module.exports = import('node:fs');" }),
    ).toThrow(
      `module importer: import() and import declarations are not available in the sandbox (line 1) (${SANDBOX_CODES.INVALID_MODULE})`,
    );
    expect(await evaluate("'import(\"node:fs\")'")).toStrictEqual({ value: 'import("node:fs")' });
  });

  it("Error.prepareStackTrace cannot be replaced to read call sites (host receivers and functions), in sloppy or strict code", async () => {
    expect.assertions(2);
    expect(
      await evaluate(
        "const mine = (e, frames) => frames; Error.prepareStackTrace = mine; let swapped; try { globalThis.Error = { prepareStackTrace: mine }; swapped = 'swapped'; } catch (e) { swapped = e.name; } [Error.prepareStackTrace === mine, typeof new Error().stack, globalThis.Error === Error, swapped]",
      ),
    ).toStrictEqual({ value: [false, "string", true, "swapped"] });
    expect(
      await evaluate(
        "'use strict'; let threw; try { Error.prepareStackTrace = (e, frames) => frames; } catch (e) { threw = e.name; } [threw, typeof new Error().stack]",
      ),
    ).toStrictEqual({ value: ["TypeError", "string"] });
  });

  it("arguments.callee.caller reaches no host or kernel function: from code, timers, promise reactions and source modules", async () => {
    expect.assertions(3);
    engine.registerModule({
      name: "probe",
      source:
        "module.exports = (function probe() { const factory = probe.caller; return [typeof factory, factory.caller, this === globalThis]; })();",
    });
    expect(
      await evaluate(
        "const fromCode = (function top() { return arguments.callee.caller; })(); new Promise((done) => setTimeout(function timer() { const fromTimer = arguments.callee.caller; Promise.resolve().then(function reaction() { done([fromCode, fromTimer, reaction.caller, probe]); }); }, 1))",
      ),
    ).toStrictEqual({ value: [null, null, null, ["function", null, true]] });
    engine.unregisterModule("probe");
    expect(await evaluate("'use strict'; (function () { return arguments.callee.caller })()")).toStrictEqual(
      guestError(
        "TypeError: 'caller', 'callee', and 'arguments' properties may not be accessed on strict mode functions or the arguments objects for calls to them (line 1, column 47)",
      ),
    );
    expect(await evaluate("typeof probe")).toStrictEqual({ value: "undefined" });
  });

  it("timer handles are plain numbers, not host Timeout objects", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "const id = setInterval(() => {}, 1); clearInterval(id); [typeof setTimeout(() => {}, 1), typeof id]",
      ),
    ).toStrictEqual({ value: ["number", "number"] });
  });

  it("hostile results (throwing Proxy traps and getters, a toJSON method) fail as guest errors or are refused by path", async () => {
    expect.assertions(3);
    expect(await evaluate("new Proxy({}, { ownKeys() { throw new Error('trap') } })")).toStrictEqual(
      guestError("Error: trap (line 1, column 35)"),
    );
    expect(await evaluate("({ get x() { throw new RangeError('no') } })")).toStrictEqual(
      guestError("RangeError: no (line 1, column 20)"),
    );
    // toJSON is never called: it is a function like any other.
    expect(await evaluate("({ toJSON() { return 'forged' } })")).toStrictEqual({
      error: `result.toJSON cannot leave the sandbox: it is a function; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays) (${SANDBOX_CODES.RESULT_NOT_TRANSFERABLE})`,
    });
  });

  it("tampering with guest intrinsics does not change how the result is encoded", async () => {
    expect.assertions(1);
    expect(
      await evaluate(
        "JSON.stringify = () => '\"forged\"'; Object.keys = () => []; Array.isArray = () => false; Map.prototype.entries = () => [].values(); Object.prototype.toJSON = undefined; ({ kept: [1, 2], map: new Map([[1, 2]]) })",
      ),
    ).toStrictEqual({ value: { kept: [1, 2], map: new Map([[1, 2]]) } });
  });

  it("stack traces show guest frames only: String(new Error().stack) and every other stack carries no runner path", async () => {
    expect.assertions(3);
    engine.registerModule({
      name: "helper",
      source: "module.exports = { where() { return new Error('m').stack; } };",
    });
    const results: SandboxResult[] = await Promise.all([
      engine.execute(
        "const o = {}; Error.captureStackTrace(o); new Promise((done) => setTimeout(() => Promise.resolve().then(() => done([String(new Error().stack), o.stack, helper.where(), new Error('t').stack])), 1))",
      ),
      engine.execute(
        "console.log(new Error('logged')); function deep() { throw new TypeError('thrown'); } deep()",
      ),
    ]);
    engine.unregisterModule("helper");
    expect(results.map(({ duration: _d, memoryUsed: _m, usage: _u, ...rest }) => rest)).toStrictEqual([
      {
        success: true,
        result: [
          "Error\n    at sandbox.js:1:124",
          "Error\n    at sandbox.js:1:21",
          "Error: m\n    at where (sandbox-module:helper:1:37)\n    at sandbox.js:1:160",
          "Error: t\n    at sandbox.js:1:169",
        ],
        logs: [],
      },
      {
        success: false,
        error: `TypeError: thrown (line 1, column 59) (${SANDBOX_CODES.GUEST_ERROR})`,
        errorCode: SANDBOX_CODES.GUEST_ERROR,
        guestError: {
          name: "TypeError",
          message: "thrown",
          stack: "TypeError: thrown\n    at deep (sandbox.js:1:59)\n    at sandbox.js:1:86",
          line: 1,
          column: 59,
        },
        logs: [{ level: "log", message: "Error: logged\n    at sandbox.js:1:13" }],
      },
    ]);
    expect(await evaluate("String(new Error().stack)")).toStrictEqual({
      value: "Error\n    at sandbox.js:1:8",
    });
    const text = JSON.stringify(results);
    const packageDir = dirname(dirname(engine.getRunnerPath()));
    expect(
      [packageDir, "runner-main", "node:internal", "file:"].filter((hostText) => text.includes(hostText)),
    ).toEqual([]);
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
      // Node 20 lets trace events run (the engine's flag sends the file to /dev/null); 22+ refuses them.
      expect((await probe.execute("0")).result).toBe(
        Number.parseInt(process.versions.node, 10) >= 22 ? "refused: ERR_ACCESS_DENIED" : "traced",
      );
    } finally {
      await probe.destroy();
    }
    const created = traceFiles().filter((name) => !before.has(name));
    for (const name of created) rmSync(name, { force: true });
    expect(created).toEqual([]);
  });
});
