import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import type { IsolateFactory, IsolateHandle } from "../isolate-factory/isolate-factory.js";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";
import { IsolateEngine, type IsolateEngineOptions } from "./isolate-engine.js";

const MIB = 1024 * 1024;
const live: IsolateEngine[] = [];

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

function engine(options: IsolateEngineOptions = {}): IsolateEngine {
  const created = new IsolateEngine({ timeout: 10_000, ...options });
  live.push(created);
  return created;
}

function outcome(result: SandboxResult): {
  success: boolean;
  result: unknown;
  error: string | undefined;
  errorCode: SandboxResult["errorCode"] | undefined;
} {
  const { success, result: value, error, errorCode } = result;
  return { success, result: value, error, errorCode };
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
    expect(outcome(await isolate.execute("globalThis.big = 'x'.repeat(1e6); big.length"))).toEqual({
      success: true,
      result: 1_000_000,
      error: undefined,
      errorCode: undefined,
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

  it("declares its capabilities as a V8-isolate security boundary", () => {
    expect(engine().capabilities).toEqual({
      securityBoundary: true,
      tier: expect.stringContaining("V8 isolate"),
      enforcesMemoryLimit: true,
      boundsAsyncWork: true,
      streamsLogs: true,
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
    expect(outcome(bomb)).toEqual({
      success: false,
      result: undefined,
      error:
        "Execution exceeded the isolate memory limit of 16 MiB; the isolate was disposed and will be replaced (SANDBOX_MEMORY_EXCEEDED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_MEMORY_EXCEEDED.md",
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
    });
    expect(isolates.map((i) => i.isDisposed)).toEqual([true]);
    expect((await isolate.execute("'fresh isolate'")).result).toBe("fresh isolate");
    expect(isolates.map((i) => i.isDisposed)).toEqual([true, false]);
  });

  it("rounds memoryLimit up to whole MiB, at least isolated-vm's 8 MiB, per engine and per call", async () => {
    const { factory, limits } = recordingFactory();
    const isolate = engine({ factory, memoryLimit: 1 });
    expect((await isolate.execute("1")).success).toBe(true);
    expect((await isolate.execute("2", {}, { memoryLimit: 20 * MIB + 1 })).success).toBe(true);
    expect((await isolate.execute("3", {}, { memoryLimit: 20 * MIB + 1 })).success).toBe(true);
    expect(limits).toEqual([8, 21]);
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
      expect(outcome(result)).toEqual({
        success: false,
        result: undefined,
        error:
          "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT); see @suaveplan/sandbox-core/docs/errors/SANDBOX_TIMEOUT.md",
        errorCode: SANDBOX_CODES.TIMEOUT,
      });
    }
    expect((await isolate.execute("'usable'")).result).toBe("usable");
    expect(isolates.filter((i) => !i.isDisposed)).toHaveLength(1);
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
    expect(outcome(result)).toEqual({
      success: false,
      result: undefined,
      error:
        "The engine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_ENGINE_DISPOSED.md",
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
    });
    expect(isolates.map((i) => i.isDisposed)).toEqual([true]);
  });

  it("names the line and column of a syntax error but keeps a runtime SyntaxError's own message", async () => {
    const isolate = engine();
    expect(outcome(await isolate.execute("const a = 1;\nconst b = 2;\nconst = 3;"))).toEqual({
      success: false,
      result: undefined,
      error: "SyntaxError: Unexpected token '=' (line 3, column 7)",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
    expect(outcome(await isolate.execute("new Function('a b')"))).toEqual({
      success: false,
      result: undefined,
      error: "SyntaxError: Unexpected identifier 'b'",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
  });

  it("fails an execution whose timer callback throws, even after the result was ready", async () => {
    const isolate = engine();
    expect(
      outcome(await isolate.execute("setTimeout(() => { throw new TypeError('late') }, 5); 'value'")),
    ).toEqual({
      success: false,
      result: undefined,
      error: "TypeError: late",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
  });

  it("evaluates top-level await through toGuestScript", async () => {
    const isolate = engine();
    expect((await isolate.execute("const v = await Promise.resolve(20);\nv + 22")).result).toBe(42);
  });

  it("copies structured-cloneable results such as Date and Map", async () => {
    const isolate = engine();
    const result = await isolate.execute("({ when: new Date(0), map: new Map([['k', [1]]]) })");
    expect(result.result).toEqual({ when: new Date(0), map: new Map([["k", [1]]]) });
    expect(outcome(await isolate.execute("({ weak: new WeakMap() })"))).toEqual({
      success: false,
      result: undefined,
      error: "result is not transferable: TypeError: #<WeakMap> could not be cloned.",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
  });

  it("formats console arguments like a compact, single-line util.inspect", async () => {
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
      "{ self: [Circular] }",
    ]);
  });

  it("keeps running when options.onLog throws", async () => {
    const isolate = engine();
    const onLog = (): void => {
      throw new Error("listener failed");
    };
    const result = await isolate.execute("console.log('a'); console.log('b'); 'ok'", {}, { onLog });
    expect({ result: result.result, logs: result.logs }).toEqual({
      result: "ok",
      logs: [
        { level: "log", message: "a" },
        { level: "log", message: "b" },
      ],
    });
  });

  it("limits the timers one execution may have pending", async () => {
    const isolate = engine({ maxTimers: 3 });
    const result = await isolate.execute("for (let i = 0; i < 4; i++) setTimeout(() => {}, 1000); 'never'");
    expect(outcome(result)).toEqual({
      success: false,
      result: undefined,
      error: "RangeError: Too many pending timers: the sandbox allows 3",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
  });

  it("bounds create/clear timer loops and floods of empty console lines, which cost no output bytes", async () => {
    const isolate = engine({ maxTimers: 2, maxLogLines: 5 });
    const timers = await isolate.execute(
      "let n = 0; try { for (;;) { clearTimeout(setTimeout(() => {}, 1000)); n++; } } catch (e) { e.message + ' after ' + n }",
    );
    expect(timers.result).toBe("Too many timers created: the sandbox allows 200 per execution after 200");
    const seen: LogEntry[] = [];
    const lines = await isolate.execute(
      "for (let i = 0; i < 1e5; i++) console.log(); 'done'",
      {},
      { onLog: (e) => seen.push(e) },
    );
    const expected = [
      ...Array.from({ length: 5 }, () => ({ level: "log", message: "" })),
      { level: "warn", message: "[output truncated at 5 lines]" },
    ];
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
    const result = await isolate.execute("n", context);
    expect(outcome(result)).toEqual({
      success: false,
      result: undefined,
      error: expect.stringMatching(
        /^context is not transferable into the isolate \(values must be structured-cloneable data\): .*could not be cloned\. \(SANDBOX_ENGINE_FAILED\); see @suaveplan\/sandbox-core\/docs\/errors\/SANDBOX_ENGINE_FAILED\.md$/,
      ),
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
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
    expect(outcome(await isolate.execute("1"))).toEqual({
      success: false,
      result: undefined,
      error: "Error: module broken failed to load: Error: bad module",
      errorCode: SANDBOX_CODES.ENGINE_FAILED,
    });
  });

  it("rejects invalid options and configuration with a SandboxError naming the field", async () => {
    const isolate = engine();
    await expect(isolate.execute("1", {}, { timeout: -1 })).rejects.toMatchObject({
      code: SANDBOX_CODES.INVALID_OPTIONS,
      message: expect.stringContaining("options.timeout"),
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
        message: expect.stringContaining("maxIdleIsolates"),
      }),
    );
    expect(() => new IsolateEngine({ nodeSnapshot: "maybe" as "error" })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: expect.stringContaining("nodeSnapshot"),
      }),
    );
  });

  it("destroys through Symbol.asyncDispose", async () => {
    const isolate = new IsolateEngine();
    expect((await isolate.execute("1 + 1")).result).toBe(2);
    await isolate[Symbol.asyncDispose]();
    expect(isolate.getHeapStatistics()).toBeNull();
    expect((await isolate.execute("1")).errorCode).toBe(SANDBOX_CODES.ENGINE_DISPOSED);
  });
});
