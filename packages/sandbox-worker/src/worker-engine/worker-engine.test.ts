import { Worker } from "node:worker_threads";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";
import { HOST_SAMPLES_WORKERS } from "@suaveplan/sandbox-core/worker-memory";
import { afterEach, describe, expect, it } from "vitest";
import { WORKER_CAPABILITIES, WorkerEngine } from "./worker-engine.js";

// These tests start real worker threads from the built entry (dist/worker-entry.cjs): run `pnpm build` first.

const MIB = 1024 * 1024;
const engines: WorkerEngine[] = [];
function makeEngine(options?: ConstructorParameters<typeof WorkerEngine>[0]): WorkerEngine {
  const engine = new WorkerEngine(options);
  engines.push(engine);
  return engine;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
});

/** The result without what varies from run to run (`duration`, `memoryUsed`). */
function stable(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

describe("WorkerEngine", () => {
  it("executes 2+2", async () => {
    const engine = makeEngine();
    const result = await engine.execute("2 + 2");
    expect(result).toStrictEqual({
      success: true,
      result: 4,
      duration: expect.any(Number),
      memoryUsed: expect.any(Number),
      logs: [],
      usage: {
        wallMs: result.duration,
        cpuMs: expect.any(Number),
        heapBytes: result.memoryUsed,
        outputBytes: 0,
        toolCalls: 0,
        toolBytes: 0,
      },
    });
  });

  it("terminates on timeout", async () => {
    const engine = makeEngine();
    const result = await engine.execute("while(true){}", {}, { timeout: 200 });
    expect(stable(result)).toStrictEqual({
      success: false,
      error:
        "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      errorCode: SANDBOX_CODES.TIMEOUT,
      logs: [],
    });
    expect(stable(await engine.execute("'usable'"))).toStrictEqual({
      success: true,
      result: "usable",
      logs: [],
    });
  });

  it("supports top-level await through the shared guest-code wrapper", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "const v = await new Promise((r) => setTimeout(() => r(20), 5));\nv + 22",
    );
    expect(stable(result)).toStrictEqual({ success: true, result: 42, logs: [] });
  });

  it("terminates a worker blocked in Atomics.wait on timeout", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)",
      {},
      { timeout: 200 },
    );
    expect(stable(result)).toStrictEqual({
      success: false,
      error:
        "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      errorCode: SANDBOX_CODES.TIMEOUT,
      logs: [],
    });
  });

  it("counts off-heap ArrayBuffer memory a run holds against memoryLimit", async () => {
    // 64 MiB of ArrayBuffers under a 16 MiB limit, held while the guest waits: the worker's own
    // sampler sees it on every Node line (a synchronous stretch only where the host can sample).
    const engine = makeEngine({ memoryLimit: 16 * MIB });
    const result = await engine.execute(
      "const buffers = [new ArrayBuffer(32 * 1024 * 1024), new ArrayBuffer(32 * 1024 * 1024)]; await new Promise((r) => setTimeout(r, 200)); buffers.length",
    );
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
    });
  });

  it("ends a run that takes array buffers in a loop that never yields with SANDBOX_MEMORY_EXCEEDED, on every Node line", async () => {
    // 1 GiB of touched, kept buffers under a 16 MiB limit, then a spin, all one synchronous
    // stretch: the worker's own sampler never runs. Node 22.16+/24: the host samples the busy
    // worker; Node 20: the process's resident memory ends it. Without either: SANDBOX_TIMEOUT.
    const engine = makeEngine({ memoryLimit: 16 * MIB, timeout: 10_000 });
    const result = await engine.execute(
      "const kept = []; for (let i = 0; i < 64; i++) kept.push(new Uint8Array(16 * 1024 * 1024).fill(1)); for (;;);",
    );
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
    });
  });

  it("ends only the run that never yields when another run shares the process", async () => {
    // The Node 20 valve reads the whole process: the run that keeps yielding is not its suspect.
    const engine = makeEngine({ memoryLimit: 16 * MIB, timeout: 10_000 });
    const [bystander, bomb] = await Promise.all([
      engine.execute("for (let i = 0; i < 40; i++) await new Promise((r) => setTimeout(r, 25)); 'done'"),
      engine.execute(
        "const kept = []; for (let i = 0; i < 64; i++) kept.push(new Uint8Array(16 * 1024 * 1024).fill(1)); for (;;);",
      ),
    ]);
    expect(
      [bystander, bomb].map((r) => ({ success: r.success, result: r.result, errorCode: r.errorCode })),
    ).toEqual([
      { success: true, result: "done", errorCode: undefined },
      { success: false, result: undefined, errorCode: SANDBOX_CODES.MEMORY_EXCEEDED },
    ]);
  });

  it.each([
    ["a typed array it no longer references", "new Uint8Array(64 * 1024 * 1024).fill(1); 1"],
    ["an ArrayBuffer it keeps", "const kept = new ArrayBuffer(64 * 1024 * 1024); kept.byteLength"],
  ])(
    "holds a run that ends without yielding to memoryLimit by one last sample at its end: %s",
    async (_what, code) => {
      // Allocated and done within one synchronous stretch: no sample inside the worker ran, and on
      // Node 20 the host cannot sample a busy worker. The last sample, as the run ends, still sees it.
      const engine = makeEngine({ memoryLimit: 16 * MIB });
      const result = await engine.execute(code);
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      });
    },
  );

  it.each([
    [
      "a memory made larger than the limit",
      "new WebAssembly.Memory({ initial: 1024 }); 1",
      "WebAssembly.Memory(): the initial size",
    ],
    [
      "a memory grown past the limit",
      "const m = new WebAssembly.Memory({ initial: 1 }); for (;;) m.grow(16);",
      "WebAssembly.Memory.grow(): the grown memory",
    ],
  ])(
    "refuses Wasm memory past memoryLimit at allocation, on every Node line: %s",
    async (_what, code, refused) => {
      const engine = makeEngine({ memoryLimit: 16 * MIB });
      const result = await engine.execute(code);
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      });
      // The guest sees the refusal as a RangeError it may catch, and stays within the limit.
      const caught = await engine.execute(`try { ${code} } catch (error) { [error.name, error.message] }`);
      expect(caught).toMatchObject({
        success: true,
        result: ["RangeError", `${refused} exceeds the sandbox's memory limit`],
      });
      expect(caught.memoryUsed).toBeLessThanOrEqual(16 * MIB);
    },
  );

  it("declares its capabilities as data: memory and async work bounded, streams logs, aborts running code, measures CPU per entry, not a security boundary", () => {
    const engine = makeEngine();
    expect({ name: engine.name, capabilities: engine.capabilities, limits: engine.limits }).toStrictEqual({
      name: "worker",
      capabilities: {
        securityBoundary: false,
        tier: "worker_threads + node:vm: own V8 heap with resource limits, but the same process — NOT a security boundary",
        enforcesMemoryLimit: true,
        boundsAsyncWork: true,
        streamsLogs: true,
        abortsRunningCode: true,
        measuresCpu: "entries",
        memoryAccounting: {
          kinds: {
            heap: "allocation",
            strings: "allocation",
            // Sampled from the host during synchronous code only where node can read a busy worker.
            arrayBuffers: HOST_SAMPLES_WORKERS ? "sampled" : "yields",
            sharedArrayBuffers: "yields",
            wasmMemory: "allocation",
          },
          sampleIntervalMs: 10,
          exactness: WORKER_CAPABILITIES.memoryAccounting?.exactness,
        },
      },
      limits: { timeout: 5_000, memoryLimit: 128 * MIB, maxOutputSize: MIB },
    });
    expect(engine.capabilities).toBe(WORKER_CAPABILITIES);
    expect(HOST_SAMPLES_WORKERS).toBe(
      typeof (Worker.prototype as { getHeapStatistics?: unknown }).getHeapStatistics === "function",
    );
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

  it("resolves SANDBOX_INVALID_OPTIONS for bad per-call options and uncopyable context values, without starting a worker", async () => {
    const engine = makeEngine();
    expect(stable(await engine.execute("1", {}, { timeout: 0 }))).toStrictEqual({
      success: false,
      error:
        "Invalid execution options: options.timeout: Too small: expected number to be >0 (got 0) (SANDBOX_INVALID_OPTIONS)",
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      logs: [],
    });
    expect(stable(await engine.execute("typeof fn", { fn: () => 1 }))).toStrictEqual({
      success: false,
      error:
        "context.fn: a function cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      logs: [],
    });
    expect(stable(await engine.execute("import('node:fs')"))).toStrictEqual({
      success: false,
      error:
        "import() and import declarations are not available in the sandbox (line 1) (SANDBOX_CODE_BLOCKED)",
      errorCode: SANDBOX_CODES.CODE_BLOCKED,
      logs: [],
    });
  });

  it("copies Date, Map, Set, BigInt, typed arrays, undefined and cycles in and out through the shared codec", async () => {
    const engine = makeEngine();
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    const context = {
      when: new Date(0),
      map: new Map([["a", 1]]),
      set: new Set([2]),
      bytes: new Uint8Array([7]),
      big: 2n ** 64n,
      nothing: undefined,
      cyclic,
    };
    const result = await engine.execute(
      "[when instanceof Date, map instanceof Map, set instanceof Set, bytes instanceof Uint8Array, cyclic.self === cyclic, typeof nothing, when, map, set, bytes, big + 1n, { cyclic, gone: undefined }]",
      context,
    );
    expect(stable(result)).toStrictEqual({
      success: true,
      result: [
        true,
        true,
        true,
        true,
        true,
        "undefined",
        new Date(0),
        new Map([["a", 1]]),
        new Set([2]),
        new Uint8Array([7]),
        2n ** 64n + 1n,
        { cyclic, gone: undefined },
      ],
      logs: [],
    });
    const back = (result.result as unknown[])[11] as { cyclic: { self: unknown } };
    expect(back.cyclic.self).toBe(back.cyclic);
  });

  it("formats console arguments like Node's util.inspect (format tokens, nested objects, Maps, errors)", async () => {
    const engine = makeEngine();
    const code =
      "console.log('%s=%d %j', 'n', 42, { j: 1 }, { a: [1, 'x'], b: { c: { d: { e: 1 } } } }, new Map([[1, 2]]), Symbol('s'), 5n); console.error(new RangeError('bad')); 0";
    const result = await engine.execute(code);
    expect(stable(result)).toStrictEqual({
      success: true,
      result: 0,
      logs: [
        {
          level: "log",
          message:
            "n=42 {\"j\":1} { a: [ 1, 'x' ], b: { c: { d: [Object] } } } Map(1) { 1 => 2 } Symbol(s) 5n",
        },
        // An error prints its stack, holding guest frames only.
        {
          level: "error",
          message: `RangeError: bad\n    at sandbox.js:1:${code.indexOf("new RangeError") + 1}`,
        },
      ],
    });
  });

  it("fails the execution with SANDBOX_GUEST_ERROR on an uncaught error in a timer callback or an unhandled rejection", async () => {
    const engine = makeEngine();
    expect(
      stable(await engine.execute("setTimeout(() => { throw new TypeError('in timer'); }, 1); 'sync'")),
    ).toStrictEqual({
      success: false,
      error: "TypeError: in timer (line 1, column 26) (SANDBOX_GUEST_ERROR)",
      errorCode: SANDBOX_CODES.GUEST_ERROR,
      logs: [],
      guestError: {
        name: "TypeError",
        message: "in timer",
        stack: "TypeError: in timer\n    at sandbox.js:1:26",
        line: 1,
        column: 26,
      },
    });
    expect(
      stable(await engine.execute("Promise.reject(new Error('lost')); setTimeout(() => {}, 50); 1")),
    ).toStrictEqual({
      success: false,
      error: "Unhandled promise rejection: Error: lost (line 1, column 16) (SANDBOX_GUEST_ERROR)",
      errorCode: SANDBOX_CODES.GUEST_ERROR,
      logs: [],
      guestError: {
        name: "Error",
        message: "lost",
        stack: "Error: lost\n    at sandbox.js:1:16",
        line: 1,
        column: 16,
        unhandledRejection: true,
      },
    });
  });

  it("validates registered modules at registration and reports a throwing source module as SANDBOX_GUEST_ERROR", async () => {
    const engine = makeEngine();
    expect(() => engine.registerModule({ name: "not-an-identifier", exports: 1 })).toThrow(
      expect.objectContaining({ code: SANDBOX_CODES.INVALID_MODULE }),
    );
    expect(() => engine.registerModule({ name: "withFn", exports: { fn: () => 1 } })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_MODULE,
        message:
          "module withFn: exports.fn is a function; module exports must be plain data (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
      }),
    );
    expect(() => engine.registerModule({ name: "broken", source: "module.exports = ;" })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_MODULE,
        message:
          "module broken: does not compile: SyntaxError: Unexpected token ';' (SANDBOX_INVALID_MODULE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_MODULE.md",
      }),
    );
    engine.registerModule({ name: "broken", source: "throw new Error('bad module');" });
    expect(stable(await engine.execute("1"))).toStrictEqual({
      success: false,
      error: "module broken failed: Error: bad module (SANDBOX_GUEST_ERROR)",
      errorCode: SANDBOX_CODES.GUEST_ERROR,
      logs: [],
      guestError: {
        name: "Error",
        message: "bad module",
        stack: "Error: bad module\n    at sandbox-module:broken:1:7",
        module: "broken",
      },
    });
  });

  it("applies a per-call memoryLimit through a worker started with that limit, keeping the logs streamed before", async () => {
    const engine = makeEngine();
    const memoryLimit = 32 * MIB;
    const result = await engine.execute(
      "console.log('hoarding'); const hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length));",
      {},
      { memoryLimit, timeout: 60_000 },
    );
    expect(stable(result)).toStrictEqual({
      success: false,
      error: `Execution exceeded its memory limit of ${memoryLimit} bytes (SANDBOX_MEMORY_EXCEEDED)`,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      logs: [{ level: "log", message: "hoarding" }],
    });
    expect(stable(await engine.execute("'survived'"))).toStrictEqual({
      success: true,
      result: "survived",
      logs: [],
    });
  });

  // On Node 22/24 a worker started with 2–8 MiB can die of V8's fatal OOM while booting, taking
  // the whole process (this test's) with it; the engine starts no worker below 12 MiB.
  it.each([2 * MIB, 8 * MIB, 12 * MIB - 1])(
    "reports a memoryLimit too small to boot a worker (%i bytes) as SANDBOX_MEMORY_EXCEEDED without starting one",
    async (memoryLimit) => {
      const engine = makeEngine({ memoryLimit });
      const perCall = makeEngine();
      const message = `Execution exceeded its memory limit of ${memoryLimit} bytes: a worker needs at least 12582912 bytes (12 MiB) to start, so none was started (SANDBOX_MEMORY_EXCEEDED)`;
      const expected = { success: false, error: message, errorCode: SANDBOX_CODES.MEMORY_EXCEEDED, logs: [] };
      expect(stable(await engine.execute("1"))).toStrictEqual(expected);
      expect(stable(await perCall.execute("1", {}, { memoryLimit }))).toStrictEqual(expected);
    },
  );

  it("runs at the smallest memoryLimit it accepts, 12 MiB", async () => {
    const engine = makeEngine({ memoryLimit: 12 * MIB });
    expect(stable(await engine.execute("6 * 7"))).toStrictEqual({ success: true, result: 42, logs: [] });
  });

  it("reports the guest heap growth inside the worker as memoryUsed", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "globalThis.keep = Array.from({ length: 200000 }, (_, i) => ({ i })); 0",
    );
    expect(stable(result)).toStrictEqual({ success: true, result: 0, logs: [] });
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
    expect({ result: stable(result), seen }).toStrictEqual({
      result: {
        success: true,
        result: "ok",
        logs: [
          { level: "log", message: "a" },
          { level: "log", message: "b" },
        ],
      },
      seen: ["a", "b"],
    });
  });

  it("ends a running execution with SANDBOX_ENGINE_DISPOSED on destroy and refuses new modules", async () => {
    const engine = makeEngine();
    const running = engine.execute("while (true) {}", {}, { timeout: 60_000 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await engine.destroy();
    expect(stable(await running)).toStrictEqual({
      success: false,
      error: "WorkerEngine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED)",
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      logs: [],
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
      expect(stable(await engine.execute("'in scope'"))).toStrictEqual({
        success: true,
        result: "in scope",
        logs: [],
      });
    }
    expect(stable(await escaped.execute("1"))).toStrictEqual({
      success: false,
      error: "WorkerEngine was destroyed; create a new WorkerEngine to run code (SANDBOX_ENGINE_DISPOSED)",
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      logs: [],
    });
  });
});
