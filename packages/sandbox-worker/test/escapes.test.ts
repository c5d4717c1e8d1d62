import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkerEngine } from "../src/index.js";

// Adversarial checks of the guest `vm` context inside the worker. WorkerEngine
// is NOT a security boundary (the worker shares the host process); these
// tests pin down what guest code can and cannot reach, as defence in depth.
// Each escape probe returns what it reached as a string, so a regression
// shows up as a concrete value (e.g. "object" for a reached `process`).

const CODEGEN_REFUSED = "Code generation from strings disallowed for this context";

let engine: WorkerEngine;
beforeAll(() => {
  engine = new WorkerEngine({ timeout: 10_000 });
});
afterAll(async () => {
  await engine.destroy();
});

async function run(code: string): Promise<SandboxResult> {
  return engine.execute(code);
}

/** The result without what varies from run to run (`duration`, `memoryUsed`). */
function stable(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

/** The guest's completion value; throws the guest error otherwise (not counted as an assertion). */
async function value(code: string): Promise<unknown> {
  const result = await run(code);
  if (!result.success) throw new Error(`guest code failed: ${result.error}`);
  return result.result;
}

describe("escape attempts inside the worker", () => {
  it("this.constructor.constructor('return process')() — refused: the global's Function cannot generate code", async () => {
    expect.assertions(2);
    // Regression (found while building this engine): with `vm.createContext({})` the
    // host-realm sandbox object answered `this.constructor`, so this returned the
    // worker's `process`. The context is now created from a null-prototype object.
    const result = await run("this.constructor.constructor('return process')()");
    expect(stable(result)).toStrictEqual({
      success: false,
      error: `EvalError: ${CODEGEN_REFUSED} (line 1, column 18) (SANDBOX_GUEST_ERROR)`,
      errorCode: SANDBOX_CODES.GUEST_ERROR,
      logs: [],
      guestError: {
        name: "EvalError",
        message: CODEGEN_REFUSED,
        stack: `EvalError: ${CODEGEN_REFUSED}\n    at sandbox.js:1:18`,
        line: 1,
        column: 18,
      },
    });
    expect(
      await value(
        "(() => { try { return typeof this.constructor.constructor('return process')(); } catch (e) { return [e instanceof EvalError, e.message]; } })()",
      ),
    ).toEqual([true, CODEGEN_REFUSED]);
  });

  it("scope probe — require, process, module, import.meta-free globals and the message port are absent", async () => {
    expect.assertions(1);
    const names = [
      "require",
      "process",
      "module",
      "exports",
      "__filename",
      "__dirname",
      "global",
      "Buffer",
      "parentPort",
      "postMessage",
      "onmessage",
      "workerData",
      "self",
      "fetch",
      // structuredClone is present now, but as the kernel's guest-realm function (no host object).
      "MessageChannel",
      "importScripts",
    ];
    const reached = await value(`[${names.map((name) => `typeof ${name}`).join(", ")}]`);
    expect(reached).toEqual(names.map(() => "undefined"));
  });

  it("eval, new Function and the async/generator function constructors — refused", async () => {
    expect.assertions(2);
    const reached = await value(`(() => {
      const tries = {
        eval: () => eval("1 + 1"),
        Function: () => new Function("return process")(),
        AsyncFunction: () => Object.getPrototypeOf(async function () {}).constructor("return process"),
        GeneratorFunction: () => Object.getPrototypeOf(function* () {}).constructor("return process"),
        AsyncGeneratorFunction: () => Object.getPrototypeOf(async function* () {}).constructor("return process"),
      };
      const out = {};
      for (const [name, attempt] of Object.entries(tries)) {
        try { out[name] = typeof attempt(); } catch (e) { out[name] = e.name + ": " + e.message; }
      }
      return out;
    })()`);
    const refused = `EvalError: ${CODEGEN_REFUSED}`;
    expect(reached).toEqual({
      eval: refused,
      Function: refused,
      AsyncFunction: refused,
      GeneratorFunction: refused,
      AsyncGeneratorFunction: refused,
    });
    // WebAssembly compilation is refused as well, synchronous and asynchronous. The
    // asynchronous rejection is settled by the platform outside any entry into the
    // realm, so the guest sees it at the next entry (here the timer).
    expect(
      await value(`[
        (() => { try { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); return "compiled"; } catch (e) { return e.name + ": " + e.message; } })(),
        await new Promise((done) => {
          WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => done("compiled"), (e) => done(e.name + ": " + e.message));
          setTimeout(() => {}, 30);
        }),
      ]`),
    ).toEqual([
      "CompileError: WebAssembly.Module(): Wasm code generation disallowed by embedder",
      "CompileError: WebAssembly.compile(): Wasm code generation disallowed by embedder",
    ]);
  });

  it("bridged globals (console, timers, queueMicrotask) — their constructor chain stays in the guest realm", async () => {
    expect.assertions(1);
    const reached = await value(`(() => {
      const out = {};
      const fns = { log: console.log, setTimeout, setInterval, clearTimeout, queueMicrotask };
      for (const [name, fn] of Object.entries(fns)) {
        try { out[name] = typeof fn.constructor.constructor("return process")(); } catch (e) { out[name] = e.name; }
      }
      return out;
    })()`);
    expect(reached).toEqual({
      log: "EvalError",
      setTimeout: "EvalError",
      setInterval: "EvalError",
      clearTimeout: "EvalError",
      queueMicrotask: "EvalError",
    });
  });

  it("import() — refused before the code runs (its rejection would carry a worker-realm error whose constructor chain generates code)", async () => {
    expect.assertions(2);
    // Regression (found while building this engine): without a dynamic-import
    // callback Node rejected import() with a worker-realm TypeError whose
    // constructor.constructor was the worker's Function (→ process). The shared
    // runtime now refuses \`import\` in the code and in module sources before running.
    const result = await run(`import("node:fs").then(
      () => "imported",
      (e) => {
        let escape;
        try { escape = typeof e.constructor.constructor("return process")(); } catch (x) { escape = x.name; }
        return [e instanceof TypeError, e.message, escape];
      },
    )`);
    expect(stable(result)).toStrictEqual({
      success: false,
      error:
        "import() and import declarations are not available in the sandbox (line 1) (SANDBOX_CODE_BLOCKED)",
      errorCode: SANDBOX_CODES.CODE_BLOCKED,
      logs: [],
    });
    expect(() =>
      engine.registerModule({ name: "sneaky", source: "module.exports = import('node:fs');" }),
    ).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_MODULE,
        message:
          "module sneaky: import() and import declarations are not available in the sandbox (line 1) (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
      }),
    );
  });

  it("stack overflow — the RangeError caught by the guest is a guest-realm error", async () => {
    expect.assertions(1);
    const reached = await value(`(() => {
      const recurse = () => recurse();
      try { recurse(); } catch (e) {
        try { return [e instanceof RangeError, typeof e.constructor.constructor("return process")()]; }
        catch (x) { return [e instanceof RangeError, x.name]; }
      }
    })()`);
    expect(reached).toEqual([true, "EvalError"]);
  });

  it("bridge call at stack exhaustion — no worker-realm error reaches the guest", async () => {
    expect.assertions(1);
    const reached = await value(`(() => {
      const foreign = [];
      const dive = () => {
        try { dive(); } catch {
          for (const call of [() => console.log("edge"), () => setTimeout(() => {}, 1), () => clearTimeout(1)]) {
            try { call(); } catch (x) { if (!(x instanceof Error)) foreign.push(String(x)); }
          }
        }
      };
      dive();
      return foreign;
    })()`);
    expect(reached).toEqual([]);
  });

  it("Error.prepareStackTrace CallSite harvest — locked; stacks show guest frames only, never host paths", async () => {
    expect.assertions(4);
    const harvested = await value(`(() => {
      Error.prepareStackTrace = (error, frames) => frames.map((f) => [f.getFileName(), typeof f.getFunction()]);
      let strictAssign;
      try { (() => { "use strict"; Error.prepareStackTrace = () => "mine"; })(); strictAssign = "assigned"; }
      catch (e) { strictAssign = e.name; }
      let replaceError;
      try { globalThis.Error = function Fake() {}; replaceError = Error.name; } catch (e) { replaceError = e.name; }
      return [typeof new Error("x").stack, strictAssign, replaceError];
    })()`);
    expect(harvested).toEqual(["string", "TypeError", "Error"]);
    const stacks = (await value(`new Promise((done) => {
      const stacks = [new Error("sync").stack];
      queueMicrotask(() => stacks.push(new Error("micro").stack));
      Promise.resolve().then(() => stacks.push(new Error("then").stack));
      setTimeout(function later() { stacks.push(new Error("timer").stack); done(stacks); }, 1);
    })`)) as string[];
    expect(stacks).toHaveLength(4);
    const frames = stacks.flatMap((stack) => stack.split("\n").slice(1));
    expect(frames.every((frame) => /^ {4}at (.+ \()?sandbox\.js:\d+:\d+\)?$/.test(frame))).toBe(true);
    expect(stacks.join("\n")).not.toMatch(/file:|node:|worker-entry|suaveplan:kernel|\/work\//);
  });

  it("Function.prototype.caller from bridged callbacks — the caller is hidden", async () => {
    expect.assertions(1);
    const reached = await value(`new Promise((done) => {
      const seen = [];
      queueMicrotask(function micro() { seen.push(micro.caller === null ? "null" : typeof micro.caller); });
      setTimeout(function timer() { seen.push(timer.caller === null ? "null" : typeof timer.caller); done(seen); }, 1);
    })`);
    expect(reached).toEqual(["null", "null"]);
  });

  it("a thenable result receives guest-realm resolvers (awaited inside the guest realm)", async () => {
    expect.assertions(1);
    const reached = await value(`({
      then(resolve) {
        try { resolve(typeof resolve.constructor.constructor("return process")()); }
        catch (e) { resolve(e.name); }
      },
    })`);
    expect(reached).toBe("EvalError");
  });

  it("prototype pollution and __proto__ keys in results do not reach the host", async () => {
    expect.assertions(3);
    const result = await value(
      'Object.prototype.polluted = \'guest\'; Array.prototype.polluted = \'guest\'; JSON.parse(\'{"__proto__": {"polluted": "via result"}, "ok": 1}\')',
    );
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("a result getter that never returns — runs inside the worker and ends with SANDBOX_TIMEOUT", async () => {
    expect.assertions(1);
    const result = await engine.execute("({ get trap() { for (;;) {} } })", {}, { timeout: 300 });
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.TIMEOUT,
    });
  });

  // One string referenced many times is serialised once per reference: 16 refs to a
  // 256 Mi-character string made the host deserialise 4 GiB and die of a fatal OOM.
  // The codec now counts every reference against maxResultBytes (= memoryLimit) and
  // refuses the result before its text is built; shared objects cross once, as references.
  it("giant result (one string referenced many times, or big buffers): refused above memoryLimit, never copied to the host", async () => {
    const limit = 16 * 1024 * 1024;
    const tooLarge = (path: string) => ({
      success: false,
      error: `${path} cannot leave the sandbox: it is larger than ${limit} bytes; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays) (SANDBOX_RESULT_NOT_TRANSFERABLE)`,
      errorCode: SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
      logs: [],
    });
    const memoryExceeded = {
      success: false,
      error: `Execution exceeded its memory limit of ${limit} bytes (SANDBOX_MEMORY_EXCEEDED)`,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      logs: [],
    };
    // Each case names the outcomes it may end with: either refusal keeps the value out of the host.
    const cases: [string, ...ReturnType<typeof stable>[]][] = [
      ["const s = 'x'.repeat(2 ** 22); Array(16).fill(s)", tooLarge("result[1]")],
      [
        "const s = 'x'.repeat(2 ** 22); const o = {}; for (let i = 0; i < 16; i++) o['k' + i] = s; o",
        tooLarge("result.k1"),
      ],
      // Bytes are measured before their text is written: the second 4 MiB buffer would not fit —
      // or, as on Node 22+ and with an ordinary (DONT_CONTEXTIFY) global, the first buffer's
      // text already overflows the 16 MiB heap, and the run ends as out of memory.
      [
        "Array.from({ length: 8 }, () => new Uint8Array(4 * 1024 * 1024))",
        tooLarge("result[1]"),
        memoryExceeded,
      ],
      // The Error crosses once (the other five are references), but its message and stack alone exceed the limit.
      ["const e = new Error('x'.repeat(2 ** 22)); [e, e, e, e, e, e]", tooLarge("result[0]")],
    ];
    expect.assertions(cases.length + 1);
    const small = new WorkerEngine({ timeout: 10_000, memoryLimit: limit });
    try {
      for (const [code, ...allowed] of cases) {
        const result = stable(await small.execute(code));
        expect(allowed.map((expected) => ({ code, result: expected }))).toContainEqual({ code, result });
      }
      // Within the budget the same shapes still cross.
      expect(stable(await small.execute("const s = 'x'.repeat(1024); Array(16).fill(s)"))).toStrictEqual({
        success: true,
        result: Array(16).fill("x".repeat(1024)),
        logs: [],
      });
    } finally {
      await small.destroy();
    }
  });
});
