import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { LogEntry } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerEngine } from "./worker-engine.js";

// These tests start real worker threads from the built entry (dist/worker-entry.js): run `pnpm build` first.

const engines: WorkerEngine[] = [];
function makeEngine(options?: ConstructorParameters<typeof WorkerEngine>[0]): WorkerEngine {
  const engine = new WorkerEngine(options);
  engines.push(engine);
  return engine;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
});

describe("WorkerEngine", () => {
  it("executes 2+2", async () => {
    const engine = makeEngine();
    const result = await engine.execute("2 + 2");
    expect(result).toEqual({
      success: true,
      result: 4,
      duration: expect.any(Number),
      memoryUsed: expect.any(Number),
      logs: [],
    });
  });

  it("terminates on timeout", async () => {
    const engine = makeEngine();
    const result = await engine.execute("while(true){}", {}, { timeout: 200 });
    expect(result).toEqual({
      success: false,
      error:
        "Execution timed out after 200 ms: the code was still running (a loop, a pending timer or an unsettled promise) and its worker was terminated; raise `timeout` or make the code finish sooner (SANDBOX_TIMEOUT); see @suaveplan/sandbox-core/docs/errors/SANDBOX_TIMEOUT.md",
      errorCode: SANDBOX_CODES.TIMEOUT,
      duration: expect.any(Number),
      logs: [],
    });
    const after = await engine.execute("'usable'");
    expect({ success: after.success, result: after.result }).toEqual({ success: true, result: "usable" });
  });

  it("supports top-level await through the shared guest-script wrapper", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "const v = await new Promise((r) => setTimeout(() => r(20), 5));\nv + 22",
    );
    expect({ success: result.success, result: result.result }).toEqual({ success: true, result: 42 });
  });

  it("terminates a worker blocked in Atomics.wait on timeout", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)",
      {},
      {
        timeout: 200,
      },
    );
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.TIMEOUT,
    });
  });

  it("does NOT count off-heap ArrayBuffer memory against memoryLimit (documented gap)", async () => {
    // 64 MiB of ArrayBuffers under a 16 MiB heap limit succeeds: backing stores live outside the V8 heap.
    const engine = makeEngine({ memoryLimit: 16 * 1024 * 1024 });
    const result = await engine.execute(
      "const buffers = [new ArrayBuffer(32 * 1024 * 1024), new ArrayBuffer(32 * 1024 * 1024)]; buffers.length",
    );
    expect({ success: result.success, result: result.result }).toEqual({ success: true, result: 2 });
  });

  it("declares its capabilities as data: memory and async work bounded, streams logs, not a security boundary", () => {
    const engine = makeEngine();
    expect({ name: engine.name, capabilities: engine.capabilities, limits: engine.limits }).toEqual({
      name: "worker",
      capabilities: {
        securityBoundary: false,
        tier: expect.stringContaining("NOT a security boundary"),
        enforcesMemoryLimit: true,
        boundsAsyncWork: true,
        streamsLogs: true,
      },
      limits: { timeout: 5_000, memoryLimit: 128 * 1024 * 1024, maxOutputSize: 1024 * 1024 },
    });
  });

  it("rejects out-of-range constructor options with SANDBOX_INVALID_CONFIG", () => {
    expect.assertions(3);
    try {
      new WorkerEngine({ timeout: -1 });
    } catch (error) {
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe(SANDBOX_CODES.INVALID_CONFIG);
      expect((error as SandboxError).message).toContain("config.timeout");
    }
  });

  it("resolves SANDBOX_INVALID_OPTIONS for bad per-call options and uncopyable context values", async () => {
    const engine = makeEngine();
    const badOption = await engine.execute("1", {}, { timeout: 0 });
    expect({ success: badOption.success, errorCode: badOption.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
    });
    expect(badOption.error).toContain("options.timeout");
    const host = { fn: () => 1 };
    const badContext = await engine.execute("typeof fn", host);
    expect({ success: badContext.success, error: badContext.error, errorCode: badContext.errorCode }).toEqual(
      {
        success: false,
        error:
          "WorkerEngine.execute: context.fn cannot be copied into the sandbox (it is a function); pass plain data (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
        errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      },
    );
  });

  it("copies Dates, Maps, Sets and typed arrays in and out of the guest realm", async () => {
    const engine = makeEngine();
    const context = {
      when: new Date(0),
      map: new Map([["a", 1]]),
      set: new Set([2]),
      bytes: new Uint8Array([7]),
    };
    const result = await engine.execute(
      "[when instanceof Date, map instanceof Map, set instanceof Set, bytes instanceof Uint8Array, when, map, set, bytes]",
      context,
    );
    expect({ success: result.success, result: result.result }).toEqual({
      success: true,
      result: [true, true, true, true, new Date(0), new Map([["a", 1]]), new Set([2]), new Uint8Array([7])],
    });
  });

  it("formats console arguments like console.log (format tokens, nested objects, Maps, errors)", async () => {
    const engine = makeEngine();
    const code =
      "console.log('%s=%d %j', 'n', 42, { j: 1 }, { a: [1, 'x'], b: { c: { d: 1 } } }, new Map([[1, 2]]), Symbol('s'), 5n); console.error(new RangeError('bad')); 0";
    const result = await engine.execute(code);
    expect(result.logs).toEqual([
      {
        level: "log",
        message: "n=42 {\"j\":1} { a: [ 1, 'x' ], b: { c: [Object] } } Map(1) { 1 => 2 } Symbol(s) 5n",
      },
      // An error prints its stack, holding guest frames only.
      {
        level: "error",
        message: `RangeError: bad\n    at sandbox.js:1:${code.indexOf("new RangeError") + 1}`,
      },
    ]);
  });

  it("fails the execution on an uncaught error in a timer callback or an unhandled rejection", async () => {
    const engine = makeEngine();
    const timer = await engine.execute("setTimeout(() => { throw new TypeError('in timer'); }, 1); 'sync'");
    expect({ success: timer.success, error: timer.error, errorCode: timer.errorCode }).toEqual({
      success: false,
      error:
        "TypeError: in timer (SANDBOX_ENGINE_FAILED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_ENGINE_FAILED.md",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
    const rejection = await engine.execute("Promise.reject(new Error('lost')); setTimeout(() => {}, 50); 1");
    expect({ success: rejection.success, error: rejection.error, errorCode: rejection.errorCode }).toEqual({
      success: false,
      error:
        "Uncaught (in promise) Error: lost (SANDBOX_ENGINE_FAILED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_ENGINE_FAILED.md",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
  });

  it("validates registered modules and reports a failing source module as SANDBOX_INVALID_MODULE", async () => {
    const engine = makeEngine();
    expect(() => engine.registerModule({ name: "not-an-identifier", exports: 1 })).toThrow(
      expect.objectContaining({ code: SANDBOX_CODES.INVALID_MODULE }),
    );
    expect(() => engine.registerModule({ name: "withFn", exports: { fn: () => 1 } })).toThrow(
      expect.objectContaining({ code: SANDBOX_CODES.INVALID_MODULE }),
    );
    engine.registerModule({ name: "broken", source: "throw new Error('bad module');" });
    const thrown = await engine.execute("1");
    expect({ success: thrown.success, error: thrown.error, errorCode: thrown.errorCode }).toEqual({
      success: false,
      error:
        'module "broken" failed to load: Error: bad module (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md',
      errorCode: SANDBOX_CODES.INVALID_MODULE,
    });
    engine.registerModule({ name: "broken", source: "module.exports = ;" });
    const syntax = await engine.execute("1");
    expect({ success: syntax.success, error: syntax.error, errorCode: syntax.errorCode }).toEqual({
      success: false,
      error:
        "module \"broken\" failed to compile: SyntaxError: Unexpected token ';' (line 1, column 18) (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
      errorCode: SANDBOX_CODES.INVALID_MODULE,
    });
  });

  it("applies a per-call memoryLimit through a worker started with that limit", async () => {
    const engine = makeEngine();
    const memoryLimit = 32 * 1024 * 1024;
    const result = await engine.execute(
      "const hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length));",
      {},
      { memoryLimit, timeout: 60_000 },
    );
    expect({ success: result.success, error: result.error, errorCode: result.errorCode }).toEqual({
      success: false,
      error: `Execution exceeded the memory limit of ${memoryLimit} bytes (V8 heap) and its worker was terminated; raise \`memoryLimit\` or allocate less (SANDBOX_MEMORY_EXCEEDED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_MEMORY_EXCEEDED.md`,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
    });
  });

  it("reports a memoryLimit too small to boot a worker as SANDBOX_MEMORY_EXCEEDED", async () => {
    const engine = makeEngine({ memoryLimit: 2 * 1024 * 1024 });
    const result = await engine.execute("1");
    expect({ success: result.success, error: result.error, errorCode: result.errorCode }).toEqual({
      success: false,
      error:
        "The worker ran out of memory while starting: memoryLimit 2097152 bytes is too small to boot a worker thread; raise `memoryLimit` (SANDBOX_MEMORY_EXCEEDED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_MEMORY_EXCEEDED.md",
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
    });
  });

  it("reports the guest heap growth as memoryUsed", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "globalThis.keep = Array.from({ length: 200000 }, (_, i) => ({ i })); 0",
    );
    expect(result.success).toBe(true);
    expect(result.memoryUsed).toBeGreaterThan(1_000_000);
  });

  it("ignores errors thrown by onLog and keeps delivering", async () => {
    const engine = makeEngine();
    const seen: string[] = [];
    const result = await engine.execute("console.log('a'); console.log('b'); 'ok'", undefined, {
      onLog: (entry: LogEntry) => {
        seen.push(entry.message);
        throw new Error("listener bug");
      },
    });
    expect({ success: result.success, result: result.result, seen }).toEqual({
      success: true,
      result: "ok",
      seen: ["a", "b"],
    });
  });

  it("ends a running execution with SANDBOX_ENGINE_DISPOSED on destroy and refuses new modules", async () => {
    const engine = makeEngine();
    const running = engine.execute("while (true) {}", {}, { timeout: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await engine.destroy();
    const result = await running;
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
    });
    expect(() => engine.registerModule({ name: "late", exports: 1 })).toThrow(
      expect.objectContaining({ code: SANDBOX_CODES.ENGINE_DISPOSED }),
    );
  });

  it("is disposable with await using", async () => {
    let escaped: WorkerEngine | undefined;
    {
      await using engine = new WorkerEngine();
      escaped = engine;
      const result = await engine.execute("'in scope'");
      expect(result.result).toBe("in scope");
    }
    const after = await escaped.execute("1");
    expect(after.errorCode).toBe(SANDBOX_CODES.ENGINE_DISPOSED);
  });
});
