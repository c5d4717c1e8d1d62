import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { LogEntry } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { VM_CAPABILITIES, VmEngine } from "./vm-engine.js";

const engines: VmEngine[] = [];
function engine(options?: ConstructorParameters<typeof VmEngine>[0]): VmEngine {
  const created = new VmEngine(options);
  engines.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.destroy()));
});

describe("VmEngine", () => {
  it("executes a simple expression", async () => {
    const vm = engine({ timeout: 5000, maxOutputSize: 1024, memoryLimit: 50_000_000 });
    const result = await vm.execute("1 + 1");
    expect({ success: result.success, result: result.result, logs: result.logs }).toEqual({
      success: true,
      result: 2,
      logs: [],
    });
    expect(result.duration).toBeGreaterThanOrEqual(0);
    expect(typeof result.memoryUsed).toBe("number");
  });

  it("enforces sync timeout", async () => {
    const vm = engine({ timeout: 5000, maxOutputSize: 1024, memoryLimit: 50_000_000 });
    const result = await vm.execute("while(true){}", {}, { timeout: 100 });
    expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.TIMEOUT,
      error:
        "Execution timed out after 100 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
    });
  });

  it("captures console output", async () => {
    const vm = engine({ timeout: 5000, maxOutputSize: 1024, memoryLimit: 50_000_000 });
    const result = await vm.execute("console.log('hello'); 1");
    expect({ success: result.success, result: result.result, logs: result.logs }).toEqual({
      success: true,
      result: 1,
      logs: [{ level: "log", message: "hello" }],
    });
  });

  it("declares vm's honest capabilities", () => {
    expect(engine().capabilities).toEqual({
      securityBoundary: false,
      tier: "node:vm context in the host process: NOT a security boundary — defence in depth only",
      enforcesMemoryLimit: false,
      boundsAsyncWork: true,
      streamsLogs: true,
      abortsRunningCode: false,
      measuresCpu: "entries",
      memoryAccounting: {
        kinds: {
          heap: false,
          strings: false,
          arrayBuffers: false,
          sharedArrayBuffers: false,
          wasmMemory: false,
        },
        exactness:
          "Not enforced: the guest allocates in the host's own isolate, which node cannot limit per context; an allocation bomb can end the host process. Use worker, spawn or isolate to bound memory.",
      },
    });
    expect(engine().capabilities).toBe(VM_CAPABILITIES);
    expect(engine().name).toBe("vm");
  });

  it("applies defaults and validates limits with SANDBOX_INVALID_CONFIG", () => {
    expect(engine().limits).toEqual({
      timeout: 5000,
      memoryLimit: 128 * 1024 * 1024,
      maxOutputSize: 1024 * 1024,
    });
    expect(() => new VmEngine({ timeout: -1 })).toThrow(SandboxError);
    try {
      new VmEngine({ maxOutputSize: 1.5 });
    } catch (error) {
      expect((error as SandboxError).code).toBe(SANDBOX_CODES.INVALID_CONFIG);
      expect((error as SandboxError).message).toContain("maxOutputSize");
    }
    expect.assertions(4);
  });

  it("takes breakOnSigint as a boolean only (a SIGINT to the running code is tested on the CLI)", () => {
    expect(() => new VmEngine({ breakOnSigint: "yes" as unknown as boolean })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: expect.stringContaining("breakOnSigint must be true or false (got string)"),
      }),
    );
    expect(engine({ breakOnSigint: true }).name).toBe("vm");
  });

  it("resolves SANDBOX_INVALID_OPTIONS for bad options and non-transferable context", async () => {
    const vm = engine();
    const badOptions = await vm.execute("1", {}, { timeout: 0 });
    expect({ success: badOptions.success, errorCode: badOptions.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
    });
    expect(badOptions.error).toContain("options.timeout");
    const badContext = await vm.execute("1", { helper: { run: () => 1 } });
    expect({ success: badContext.success, errorCode: badContext.errorCode, error: badContext.error }).toEqual(
      {
        success: false,
        errorCode: SANDBOX_CODES.INVALID_OPTIONS,
        error:
          "context.helper.run: a function cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
      },
    );
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    const cyclicContext = await vm.execute("cyclic.self === cyclic && cyclic.n", { cyclic });
    expect({ success: cyclicContext.success, result: cyclicContext.result }).toEqual({
      success: true,
      result: 1,
    });
  });

  it("reports syntax errors with their line and no host frames", async () => {
    const result = await engine().execute("const a = 1;\nconst = 2;");
    expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.SYNTAX_ERROR,
      error: "SyntaxError: Unexpected token '=' (line 2, column 7) (SANDBOX_SYNTAX_ERROR)",
    });
  });

  it("crosses results through the shared codec: Dates stay Dates, non-finite numbers and undefined members stay", async () => {
    const vm = engine();
    const result = await vm.execute(
      "({ when: new Date(0), nan: NaN, inf: -Infinity, gone: undefined, list: [undefined, 1] })",
    );
    expect(result.result).toStrictEqual({
      when: new Date(0),
      nan: Number.NaN,
      inf: Number.NEGATIVE_INFINITY,
      gone: undefined,
      list: [undefined, 1],
    });
    expect((await vm.execute("NaN")).result).toBeNaN();
  });

  it("fails the execution on an uncaught error in a timer, even after a value", async () => {
    const result = await engine().execute(
      "setTimeout(() => { throw new TypeError('late boom') }, 5); 'value'",
    );
    expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.GUEST_ERROR,
      error: "TypeError: late boom (line 1, column 26) (SANDBOX_GUEST_ERROR)",
    });
  });

  it("reuses the compiled script for repeated code without sharing state", async () => {
    const vm = engine();
    const code = "globalThis.count = (globalThis.count ?? 0) + 1; count";
    const results = [await vm.execute(code), await vm.execute(code), await vm.execute(code)];
    expect(results.map((r) => r.result)).toEqual([1, 1, 1]);
  });

  it("refuses string code in timers and eval (code generation is off)", async () => {
    const vm = engine();
    const timer = await vm.execute("setTimeout('1 + 1', 1)");
    expect(timer.error).toBe(
      'TypeError: The "callback" argument must be of type function; code strings are not evaluated in the sandbox (line 1, column 1) (SANDBOX_GUEST_ERROR)',
    );
    const evaluated = await vm.execute("eval('1 + 1')");
    expect(evaluated.error).toBe(
      "EvalError: Code generation from strings disallowed for this context (line 1, column 1) (SANDBOX_GUEST_ERROR)",
    );
  });

  it("validates modules: INVALID_MODULE for bad names, non-data exports and broken source", () => {
    const vm = engine();
    const codeOf = (fn: () => void): string | undefined => {
      try {
        fn();
      } catch (error) {
        return error instanceof SandboxError ? error.code : "not a SandboxError";
      }
      return undefined;
    };
    expect(codeOf(() => vm.registerModule({ name: "not an identifier", exports: 1 }))).toBe(
      SANDBOX_CODES.INVALID_MODULE,
    );
    expect(codeOf(() => vm.registerModule({ name: "fn", exports: { f: () => 1 } }))).toBe(
      SANDBOX_CODES.INVALID_MODULE,
    );
    expect(codeOf(() => vm.registerModule({ name: "broken", source: "module.exports = {" }))).toBe(
      SANDBOX_CODES.INVALID_MODULE,
    );
    expect(codeOf(() => vm.registerModule({ name: "loader", source: "module.exports = import('fs')" }))).toBe(
      SANDBOX_CODES.INVALID_MODULE,
    );
  });

  it("reports a source module that throws, naming the module", async () => {
    const vm = engine();
    vm.registerModule({ name: "bad", source: "throw new Error('init failed')" });
    const result = await vm.execute("1");
    expect(result.error).toBe("module bad failed: Error: init failed (SANDBOX_GUEST_ERROR)");
  });

  it("resolves in-flight executions with SANDBOX_ENGINE_DISPOSED on destroy and refuses registration after", async () => {
    const vm = engine();
    const pending = vm.execute("new Promise((resolve) => setTimeout(resolve, 10000))");
    await vm.destroy();
    const result = await pending;
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
    });
    expect(() => vm.registerModule({ name: "late", exports: 1 })).toThrow(
      "VmEngine.registerModule: the engine was destroyed; create a new VmEngine (SANDBOX_ENGINE_DISPOSED)",
    );
  });

  it("keeps pure expressions bounded when a source module installs a looping getter", async () => {
    const vm = engine();
    vm.registerModule({
      name: "trap",
      source: "Object.defineProperty(globalThis, 'spin', { get() { for (;;) {} } }); module.exports = 1;",
    });
    const result = await vm.execute("spin + 1", {}, { timeout: 200 });
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.TIMEOUT,
    });
  });

  it("caps pending timers per execution (each is a host timer)", async () => {
    const result = await engine().execute(
      "const ids = []; try { for (;;) ids.push(setTimeout(() => {}, 60000)); } catch (e) { for (const id of ids) clearTimeout(id); [ids.length, e.name, e.message] }",
      {},
      { timeout: 5000 },
    );
    expect(result.result).toEqual([
      1_000,
      "RangeError",
      "Too many pending timers in the sandbox (limit 1000)",
    ]);
  });

  it("supports await using", async () => {
    let seen: LogEntry[] = [];
    {
      await using vm = new VmEngine();
      seen = (await vm.execute("console.info('inside'); 0")).logs;
    }
    expect(seen).toEqual([{ level: "info", message: "inside" }]);
  });

  it("formats console arguments as util.inspect does: objects, errors with their guest stack, BigInt, symbols", async () => {
    const result = await engine().execute(
      "console.log({ a: [1, 'x'] }, new RangeError('bad'), undefined, 2n, Symbol('s'), function named() {}); 0",
    );
    expect(result.logs).toEqual([
      {
        level: "log",
        message:
          "{ a: [ 1, 'x' ] } RangeError: bad\n    at sandbox.js:1:30 undefined 2n Symbol(s) [Function: named]",
      },
    ]);
  });

  it("answers tools.<name>() calls through hostCalls, with copies both ways", async () => {
    const seen: unknown[] = [];
    const result = await engine().execute(
      "const r = await tools.add({ a: 2, b: 3, when: new Date(1) }); r.sum * 2",
      {},
      {
        hostCalls: {
          names: ["add"],
          async call(name, input) {
            seen.push([name, input]);
            const { a, b } = input as { a: number; b: number };
            return { sum: a + b };
          },
        },
      },
    );
    expect({ success: result.success, result: result.result }).toEqual({ success: true, result: 10 });
    expect(seen).toEqual([["add", { a: 2, b: 3, when: new Date(1) }]]);
  });

  it("cancels through options.signal: before the start, and at the next await", async () => {
    const vm = engine();
    const before = await vm.execute("1", {}, { signal: AbortSignal.abort() });
    expect({ success: before.success, errorCode: before.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.CANCELLED,
    });
    const controller = new AbortController();
    const pending = vm.execute(
      "await new Promise((r) => setTimeout(r, 5000)); 'late'",
      {},
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 50);
    const during = await pending;
    expect({ success: during.success, errorCode: during.errorCode, error: during.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.CANCELLED,
      error: "Execution was cancelled (SANDBOX_CANCELLED)",
    });
  });
});
