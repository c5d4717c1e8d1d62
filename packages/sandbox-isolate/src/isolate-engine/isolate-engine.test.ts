import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import type { IsolateFactory, IsolateHandle } from "../isolate-factory/isolate-factory.js";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";
import { ISOLATE_CAPABILITIES, IsolateEngine, type IsolateEngineOptions } from "./isolate-engine.js";

const MIB = 1024 * 1024;
const live: IsolateEngine[] = [];
const { GUEST_ERROR, SYNTAX_ERROR, RESULT_NOT_TRANSFERABLE, TIMEOUT, MEMORY_EXCEEDED, ENGINE_DISPOSED } =
  SANDBOX_CODES;

/** The real isolated-vm factory, recording every isolate it creates. */
function recordingFactory(): { factory: IsolateFactory; isolates: IsolateHandle[]; limits: number[] } {
  const real = createIsolatedVmFactory();
  const isolates: IsolateHandle[] = [];
  const limits: number[] = [];
  return {
    isolates,
    limits,
    factory: {
      createIsolate(options) {
        limits.push(options.memoryLimit);
        const isolate = real.createIsolate(options);
        isolates.push(isolate);
        return isolate;
      },
      createCallback: (fn) => real.createCallback(fn),
    },
  };
}

// In-process mode: vitest's workers have --no-node-snapshot. Helper mode (the
// default) is test/helper-process.test.ts; both run test/conformance.test.ts.
function engine(options: IsolateEngineOptions = {}): IsolateEngine {
  const created = new IsolateEngine({ timeout: 10_000, process: "in-process", ...options });
  live.push(created);
  return created;
}

/** The whole result but for the measured fields. */
function outcome(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  await Promise.all(live.splice(0).map((e) => e.destroy()));
});

describe("IsolateEngine", () => {
  it("returns null heap after destroy", async () => {
    const isolate = engine();
    const before = isolate.getHeapStatistics();
    expect(before?.total_heap_size).toBeGreaterThan(0);
    await isolate.destroy();
    expect(isolate.getHeapStatistics()).toBeNull();
  });

  it("reports the warm isolate's heap statistics in bytes, within its memory limit", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory, memoryLimit: 32 * MIB });
    expect(outcome(await isolate.execute("globalThis.big = 'x'.repeat(1e6); big.length"))).toStrictEqual({
      success: true,
      result: 1_000_000,
      logs: [],
    });
    const stats = isolate.getHeapStatistics();
    expect(isolates).toHaveLength(1);
    expect(stats).not.toBeNull();
    expect(Object.keys(stats ?? {}).sort()).toEqual([
      "does_zap_garbage",
      "externally_allocated_size",
      "heap_size_limit",
      "malloced_memory",
      "peak_malloced_memory",
      "total_available_size",
      "total_heap_size",
      "total_heap_size_executable",
      "total_physical_size",
      "used_heap_size",
    ]);
    expect(stats?.used_heap_size).toBeLessThanOrEqual(stats?.total_heap_size ?? 0);
    expect(stats?.heap_size_limit).toBeGreaterThanOrEqual(32 * MIB);
    expect(stats?.heap_size_limit).toBeLessThan(64 * MIB);
  });

  it("reports memoryUsed as the growth of the isolate's heap during the execution", async () => {
    const isolate = engine({ memoryLimit: 64 * MIB });
    const small = await isolate.execute("1");
    const large = await isolate.execute("globalThis.keep = new Array(1e6).fill(0).map((_, i) => ({ i })); 1");
    expect([typeof small.memoryUsed, typeof large.memoryUsed]).toEqual(["number", "number"]);
    expect(large.memoryUsed).toBeGreaterThan(10 * MIB);
    expect(small.memoryUsed).toBeLessThan(large.memoryUsed ?? 0);
  });

  it("declares its capabilities as a V8-isolate security boundary, whose fatal errors end the application", () => {
    expect(engine().capabilities).toStrictEqual({
      securityBoundary: true,
      tier: "V8 isolate (isolated-vm) in this process: a security boundary — separate heap with a memory limit (array buffers counted, Wasm memory capped), no host objects reachable; a fatal V8 error (e.g. an out-of-memory abort the heap limit did not catch) ends the application",
      enforcesMemoryLimit: true,
      boundsAsyncWork: true,
      streamsLogs: true,
      abortsRunningCode: true,
      measuresCpu: "isolate",
      memoryAccounting: {
        kinds: {
          heap: "allocation",
          strings: "allocation",
          arrayBuffers: "allocation",
          sharedArrayBuffers: "allocation",
          wasmMemory: "allocation",
        },
        exactness: ISOLATE_CAPABILITIES.memoryAccounting?.exactness,
      },
    });
    expect(engine().name).toBe("isolate");
  });

  it("reuses one warm isolate, with a fresh context per execution", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory });
    const results = [];
    for (const code of [
      "globalThis.seen = 1; var v = 2; typeof seen",
      "typeof seen + ' ' + typeof v",
      "2 + 3",
    ]) {
      results.push((await isolate.execute(code)).result);
      await sleep(5); // let the idle isolate prepare its spare context
    }
    expect(results).toEqual(["number", "undefined undefined", 5]);
    expect(isolates).toHaveLength(1);
    expect(isolates[0]?.isDisposed).toBe(false);
  });

  it("disposes and replaces the isolate when the memory limit is exceeded", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory, memoryLimit: 16 * MIB });
    const bomb = await isolate.execute("const hoard = []; for (;;) hoard.push(new Array(1e5).fill(1));");
    expect(outcome(bomb)).toStrictEqual({
      success: false,
      error: `Execution exceeded its memory limit of ${16 * MIB} bytes (SANDBOX_MEMORY_EXCEEDED)`,
      errorCode: MEMORY_EXCEEDED,
      logs: [],
    });
    expect(isolates.map((i) => i.isDisposed)).toEqual([true]);
    expect((await isolate.execute("'fresh isolate'")).result).toBe("fresh isolate");
    expect(isolates.map((i) => i.isDisposed)).toEqual([true, false]);
  });

  it("rounds memoryLimit up to whole MiB, per engine and per call", async () => {
    const { factory, limits } = recordingFactory();
    const isolate = engine({ factory, memoryLimit: 8 * MIB });
    expect(outcome(await isolate.execute("'x'.repeat(1000)"))).toStrictEqual({
      success: true,
      result: "x".repeat(1000),
      logs: [],
    });
    expect((await isolate.execute("2", {}, { memoryLimit: 20 * MIB + 1 })).success).toBe(true);
    expect((await isolate.execute("3", {}, { memoryLimit: 20 * MIB })).success).toBe(true);
    expect(limits).toEqual([8, 21, 20]);
  });

  it("refuses a memoryLimit below isolated-vm's 8 MiB instead of raising it: INVALID_CONFIG per engine, INVALID_OPTIONS per call", async () => {
    const { factory, limits } = recordingFactory();
    let error: unknown;
    try {
      engine({ factory, memoryLimit: 64 });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({
      code: "SANDBOX_INVALID_CONFIG",
      message:
        'memoryLimit: 64 bytes is below the isolate engine\'s minimum of 8 MiB (8388608 bytes); did you mean "64MiB"? (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
    });
    const isolate = engine({ factory });
    expect(
      await Promise.all(
        [1, 4 * MIB, 8 * MIB - 1].map(async (memoryLimit) =>
          outcome(await isolate.execute("1", {}, { memoryLimit })),
        ),
      ),
    ).toEqual([
      {
        success: false,
        errorCode: "SANDBOX_INVALID_OPTIONS",
        error:
          'options.memoryLimit: 1 byte is below the isolate engine\'s minimum of 8 MiB (8388608 bytes); give at least "8MiB" (SANDBOX_INVALID_OPTIONS)',
        logs: [],
      },
      {
        success: false,
        errorCode: "SANDBOX_INVALID_OPTIONS",
        error:
          'options.memoryLimit: 4 MiB is below the isolate engine\'s minimum of 8 MiB (8388608 bytes); give at least "8MiB" (SANDBOX_INVALID_OPTIONS)',
        logs: [],
      },
      {
        success: false,
        errorCode: "SANDBOX_INVALID_OPTIONS",
        error:
          'options.memoryLimit: 8388607 bytes is below the isolate engine\'s minimum of 8 MiB (8388608 bytes); give at least "8MiB" (SANDBOX_INVALID_OPTIONS)',
        logs: [],
      },
    ]);
    // Nothing ran: no isolate was made for a refused limit.
    expect(limits).toEqual([]);
  });

  it("leases its own isolate to each concurrent execution and keeps maxIdleIsolates warm", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory, maxIdleIsolates: 1 });
    const results = await Promise.all(
      [30, 20, 10].map((delay) =>
        isolate.execute("new Promise((r) => setTimeout(() => r(delay), delay))", { delay }),
      ),
    );
    expect(results.map((r) => r.result)).toEqual([30, 20, 10]);
    expect(isolates).toHaveLength(3);
    expect(isolates.filter((i) => !i.isDisposed)).toHaveLength(1);
  });

  it("keeps the isolate after a timed-out promise or loop, since nothing is left running in it", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory, timeout: 200 });
    const pending = await isolate.execute("new Promise(() => {})");
    const loop = await isolate.execute("for (;;) {}");
    const inTimer = await isolate.execute("setTimeout(() => { for (;;) {} }, 1); new Promise(() => {})");
    for (const result of [pending, loop, inTimer]) {
      expect(outcome(result)).toStrictEqual({
        success: false,
        error:
          "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
        errorCode: TIMEOUT,
        logs: [],
      });
    }
    expect((await isolate.execute("'usable'")).result).toBe("usable");
    expect(isolates.map((i) => i.isDisposed)).toEqual([false]);
  });

  it("ends a running execution with SANDBOX_ENGINE_DISPOSED on destroy and disposes its isolate", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory, timeout: 20_000 });
    const running = isolate.execute("for (;;) {}");
    await sleep(100);
    const started = Date.now();
    await isolate.destroy();
    const result = await running;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(outcome(result)).toStrictEqual({
      success: false,
      error: "IsolateEngine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED)",
      errorCode: ENGINE_DISPOSED,
      logs: [],
    });
    expect(isolates.map((i) => i.isDisposed)).toEqual([true]);
  });

  it("destroy() called from onLog, while the isolate waits on that console line, ends the run", async () => {
    const isolate = engine({ timeout: 5_000 });
    const result = await isolate.execute(
      "console.log('a'); for (;;) {}",
      {},
      { onLog: () => void isolate.destroy() },
    );
    expect(outcome(result)).toStrictEqual({
      success: false,
      error: "IsolateEngine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED)",
      errorCode: ENGINE_DISPOSED,
      logs: [{ level: "log", message: "a" }],
    });
  });

  it("options.signal cancels a running execution at once (disposing the busy isolate) and refuses an aborted one", async () => {
    const { factory, isolates } = recordingFactory();
    const isolate = engine({ factory, timeout: 20_000 });
    const controller = new AbortController();
    const running = isolate.execute("for (;;) {}", {}, { signal: controller.signal });
    await sleep(100);
    controller.abort();
    expect(outcome(await running)).toStrictEqual({
      success: false,
      error: "Execution was cancelled (SANDBOX_CANCELLED)",
      errorCode: SANDBOX_CODES.CANCELLED,
      logs: [],
    });
    expect(isolates.map((i) => i.isDisposed)).toEqual([true]);
    expect(outcome(await isolate.execute("1", {}, { signal: controller.signal }))).toStrictEqual({
      success: false,
      error: "Execution was cancelled before it started (SANDBOX_CANCELLED)",
      errorCode: SANDBOX_CODES.CANCELLED,
      logs: [],
    });
  });

  it("answers tools.<name>(input) through options.hostCalls, values through the codec both ways", async () => {
    const isolate = engine();
    const seen: unknown[] = [];
    const hostCalls = {
      names: ["lookup", "broken"],
      async call(name: string, input: unknown) {
        seen.push([name, input]);
        if (name === "broken") throw Object.assign(new Error("no such city"), { tool: "broken" });
        return { when: new Date(0), temps: new Map([["Oslo", -3]]) };
      },
    };
    const result = await isolate.execute(
      "const found = await tools.lookup({ city: 'Oslo', at: new Date(5) });\nlet failed;\ntry { await tools.broken(1); } catch (e) { failed = [e.name, e.message, e.tool]; }\n[found, failed, Object.keys(tools)]",
      {},
      { hostCalls },
    );
    expect(outcome(result)).toStrictEqual({
      success: true,
      result: [
        { when: new Date(0), temps: new Map([["Oslo", -3]]) },
        ["Error", "no such city", "broken"],
        ["lookup", "broken"],
      ],
      logs: [],
    });
    expect(seen).toEqual([
      ["lookup", { city: "Oslo", at: new Date(5) }],
      ["broken", 1],
    ]);
  });

  it("reports a syntax error with its line and column (SANDBOX_SYNTAX_ERROR), a runtime SyntaxError as a guest error", async () => {
    const isolate = engine();
    expect(outcome(await isolate.execute("const a = 1;\nconst b = 2;\nconst = 3;"))).toStrictEqual({
      success: false,
      error: "SyntaxError: Unexpected token '=' (line 3, column 7) (SANDBOX_SYNTAX_ERROR)",
      errorCode: SYNTAX_ERROR,
      logs: [],
      guestError: { name: "SyntaxError", message: "Unexpected token '='", stack: "", line: 3, column: 7 },
    });
    expect(
      outcome(
        await isolate.execute(
          "function parse() {\n  return JSON.parse('{');\n}\ntry { parse() } catch (e) { e.name + ': ' + e.message }",
        ),
      ),
    ).toStrictEqual({
      success: true,
      // V8's own wording, which changes between Node lines (Node 24 adds "(line 1 column 2)").
      result: jsonParseMessage("{"),
      logs: [],
    });
  });

  it("fails an execution whose timer callback throws, even after the result was ready", async () => {
    const isolate = engine();
    expect(
      outcome(
        await isolate.execute("setTimeout(function late() { throw new TypeError('late') }, 5); 'value'"),
      ),
    ).toStrictEqual({
      success: false,
      error: "TypeError: late (line 1, column 36) (SANDBOX_GUEST_ERROR)",
      errorCode: GUEST_ERROR,
      logs: [],
      guestError: {
        name: "TypeError",
        message: "late",
        stack: "TypeError: late\n    at late (sandbox.js:1:36)",
        line: 1,
        column: 36,
      },
    });
  });

  it("fails the run on a rejection nobody handled, which isolated-vm throws to the running call", async () => {
    const isolate = engine();
    expect(
      outcome(
        await isolate.execute(
          "setTimeout(function later() { Promise.reject(new RangeError('lost')); }, 1); 'value'",
        ),
      ),
    ).toStrictEqual({
      success: false,
      error: "Unhandled promise rejection: RangeError: lost (line 1, column 46) (SANDBOX_GUEST_ERROR)",
      errorCode: GUEST_ERROR,
      logs: [],
      guestError: {
        name: "RangeError",
        message: "lost",
        stack: "RangeError: lost\n    at later (sandbox.js:1:46)",
        line: 1,
        column: 46,
        unhandledRejection: true,
      },
    });
    expect(outcome(await isolate.execute("Promise.reject('plain'); 1"))).toStrictEqual({
      success: false,
      error: "Unhandled promise rejection: Uncaught 'plain' (SANDBOX_GUEST_ERROR)",
      errorCode: GUEST_ERROR,
      logs: [],
      guestError: { name: "", message: "'plain'", stack: "", unhandledRejection: true },
    });
    // isolated-vm copies only Errors and primitives out of the rejection; the kernel never sees it.
    expect(outcome(await isolate.execute("Promise.reject({ a: 1 }); 1"))).toStrictEqual({
      success: false,
      error:
        "Unhandled promise rejection: Uncaught an object that is not an Error (isolated-vm copies nothing more of it) (SANDBOX_GUEST_ERROR)",
      errorCode: GUEST_ERROR,
      logs: [],
      guestError: {
        name: "",
        message: "an object that is not an Error (isolated-vm copies nothing more of it)",
        stack: "",
        unhandledRejection: true,
      },
    });
    // Handled within the same turn: not a failure.
    expect(
      outcome(
        await isolate.execute("const p = Promise.reject(new Error('x')); p.catch(() => {}); 'handled'"),
      ),
    ).toStrictEqual({
      success: true,
      result: "handled",
      logs: [],
    });
  });

  it("evaluates top-level await", async () => {
    const isolate = engine();
    expect((await isolate.execute("const v = await Promise.resolve(20);\nv + 22")).result).toBe(42);
  });

  it("copies results through the codec: Date, Map, undefined; a WeakMap names its path", async () => {
    const isolate = engine();
    expect(
      outcome(await isolate.execute("({ when: new Date(0), map: new Map([['k', [1]]]), none: undefined })")),
    ).toStrictEqual({
      success: true,
      result: { when: new Date(0), map: new Map([["k", [1]]]), none: undefined },
      logs: [],
    });
    expect(outcome(await isolate.execute("({ deep: [{ weak: new WeakMap() }] })"))).toStrictEqual({
      success: false,
      error:
        "result.deep[0].weak cannot leave the sandbox: it is a WeakMap; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays) (SANDBOX_RESULT_NOT_TRANSFERABLE)",
      errorCode: RESULT_NOT_TRANSFERABLE,
      logs: [],
    });
  });

  it("formats console arguments like Node's util.format", async () => {
    const isolate = engine();
    const result = await isolate.execute(
      [
        "console.log({ a: 1, b: 'x', c: [1, 2], d: { e: { f: { g: 1 } } } }, new Map([[1, { a: 2 }]]), new Set(['s']));",
        "console.log('str', 1n, -0, Symbol('s'), function f() {}, class K {}, null, undefined, [], {}, new Date(0), /re/g);",
        "console.log(Object.create(null), ['a', 'b c'], { 'a-b': 1, get g() { return 1 } });",
        "console.log('%s is %d%% %j %o', 'x', 42, { a: 1 }, 'q');",
        "const o = {}; o.self = o; console.log(o);",
      ].join("\n"),
    );
    expect(result.logs.map((entry) => entry.message)).toEqual([
      "{ a: 1, b: 'x', c: [ 1, 2 ], d: { e: { f: [Object] } } } Map(1) { 1 => { a: 2 } } Set(1) { 's' }",
      "str 1n -0 Symbol(s) [Function: f] [class K] null undefined [] {} 1970-01-01T00:00:00.000Z /re/g",
      "[Object: null prototype] {} [ 'a', 'b c' ] { 'a-b': 1, g: [Getter] }",
      "x is 42% {\"a\":1} 'q'",
      "<ref *1> { self: [Circular *1] }",
    ]);
  });

  it("keeps running when options.onLog throws", async () => {
    const isolate = engine();
    const onLog = (): void => {
      throw new Error("listener failed");
    };
    const result = await isolate.execute("console.log('a'); console.log('b'); 'ok'", {}, { onLog });
    expect(outcome(result)).toStrictEqual({
      success: true,
      result: "ok",
      logs: [
        { level: "log", message: "a" },
        { level: "log", message: "b" },
      ],
    });
  });

  it("limits the timers one execution may have pending", async () => {
    const isolate = engine({ maxTimers: 3 });
    const result = await isolate.execute(
      "try { for (let i = 0; i < 4; i++) setTimeout(() => {}, 1); 'never' } catch (e) { e.name + ': ' + e.message }",
    );
    expect(outcome(result)).toStrictEqual({
      success: true,
      result: "RangeError: Too many pending timers in the sandbox (limit 3)",
      logs: [],
    });
  });

  it("bounds create/clear timer loops and floods of empty console lines, which cost no output bytes", async () => {
    const isolate = engine({ maxTimers: 2, maxLogLines: 5 });
    const timers = await isolate.execute(
      "let n = 0; try { for (;;) { clearTimeout(setTimeout(() => {}, 1000)); n++; } } catch (e) { e.message + ' after ' + n }",
    );
    expect(timers.result).toBe("Too many timers created in this execution (limit 200) after 200");
    const seen: LogEntry[] = [];
    const lines = await isolate.execute(
      "for (let i = 0; i < 1e5; i++) console.log(); 'done'",
      {},
      { onLog: (e) => seen.push(e) },
    );
    const expected = Array.from({ length: 5 }, () => ({ level: "log", message: "" }));
    expect({ result: lines.result, logs: lines.logs, seen }).toEqual({
      result: "done",
      logs: expected,
      seen: expected,
    });
  });

  it("streams logs to onLog in order while timers fire", async () => {
    const isolate = engine();
    const seen: LogEntry[] = [];
    const result = await isolate.execute(
      "let n = 0; new Promise((done) => { const id = setInterval(() => { console.info('tick ' + ++n); if (n === 3) { clearInterval(id); done(n); } }, 5); })",
      {},
      { onLog: (entry) => seen.push(entry) },
    );
    const ticks = [1, 2, 3].map((n) => ({ level: "info", message: `tick ${n}` }));
    expect({ result: result.result, logs: result.logs, seen }).toEqual({
      result: 3,
      logs: ticks,
      seen: ticks,
    });
  });

  it("refuses a context value that cannot be copied and leaves the host object alone", async () => {
    const isolate = engine();
    const context = { n: 1, fn: () => "host" };
    expect(outcome(await isolate.execute("n", context))).toStrictEqual({
      success: false,
      error:
        "context.fn: a function cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      logs: [],
    });
    expect(Object.keys(context)).toEqual(["n", "fn"]);
    expect((await isolate.execute("'next run fine'")).result).toBe("next run fine");
  });

  it("rejects module exports that cannot be copied, and reports a source module that throws", async () => {
    const isolate = engine();
    expect(() => isolate.registerModule({ name: "tools", exports: { run: () => 1 } })).toThrow(
      expect.objectContaining({ code: SANDBOX_CODES.INVALID_MODULE }),
    );
    isolate.registerModule({ name: "broken", source: "throw new Error('bad module')" });
    expect(outcome(await isolate.execute("1"))).toStrictEqual({
      success: false,
      error: "module broken failed: Error: bad module (SANDBOX_GUEST_ERROR)",
      errorCode: GUEST_ERROR,
      logs: [],
      guestError: {
        name: "Error",
        message: "bad module",
        stack: "Error: bad module\n    at sandbox-module:broken:1:7",
        module: "broken",
      },
    });
  });

  it("resolves invalid options as SANDBOX_INVALID_OPTIONS and throws invalid configuration naming the field", async () => {
    const isolate = engine();
    expect(outcome(await isolate.execute("1", {}, { timeout: -1 }))).toStrictEqual({
      success: false,
      error:
        "Invalid execution options: options.timeout: Too small: expected number to be >0 (got -1) (SANDBOX_INVALID_OPTIONS)",
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      logs: [],
    });
    expect(() => new IsolateEngine({ timeout: 0 })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: expect.stringContaining("config.timeout"),
      }),
    );
    expect(() => new IsolateEngine({ maxIdleIsolates: -1 })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message:
          "Invalid IsolateEngine option maxIdleIsolates: expected a non-negative integer (got -1) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
      }),
    );
    expect(() => new IsolateEngine({ helpers: 0 })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message:
          "Invalid IsolateEngine option helpers: expected a positive integer (got 0) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
      }),
    );
    expect(() => new IsolateEngine({ nodeSnapshot: "maybe" as "error" })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message:
          'Invalid IsolateEngine option nodeSnapshot: expected "error" or "ignore" (got "maybe") (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
      }),
    );
  });

  it("destroys through Symbol.asyncDispose", async () => {
    const isolate = new IsolateEngine({ process: "in-process" });
    expect((await isolate.execute("1 + 1")).result).toBe(2);
    await isolate[Symbol.asyncDispose]();
    expect(isolate.getHeapStatistics()).toBeNull();
    expect(outcome(await isolate.execute("1"))).toStrictEqual({
      success: false,
      error: "IsolateEngine was destroyed; create a new IsolateEngine to run code (SANDBOX_ENGINE_DISPOSED)",
      errorCode: ENGINE_DISPOSED,
      logs: [],
    });
  });
});

/** `name: message` of the SyntaxError V8 throws for `JSON.parse(text)` in this Node. */
function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
  throw new Error(`JSON.parse(${JSON.stringify(text)}) did not throw`);
}
