import { inspect } from "node:util";
import { expect } from "vitest";
import { SANDBOX_CODES } from "../error-codes/sandbox-codes.js";
import { truncationSentinel } from "../resource-limiter/output-budget.js";
import type {
  EngineCapabilities,
  EngineLimits,
  LogEntry,
  SandboxEngine,
  SandboxResult,
} from "../types/sandbox-types.js";
import { activeResources, childPids, grownResources, sleep } from "./host-probes.js";
import { expectedBombOutcome, MEMORY_BOMB_ROWS } from "./memory-bombs.js";
import { checkParityRow, PARITY_ROWS } from "./parity-table.js";

/** Tunables of the conformance suite (all optional). */
export interface EngineConformanceOptions {
  /** Execution timeout (ms) used by checks that expect `SANDBOX_TIMEOUT`. Default 500. */
  shortTimeoutMs?: number;
  /** Execution timeout (ms) used by checks that must succeed. Default 10_000. */
  timeoutMs?: number;
  /** Heap limit (bytes) given to the engine for the allocation-bomb check. Default 64 MiB. */
  memoryLimitBytes?: number;
  /** Vitest timeout (ms) of each check. Default 60_000. */
  testTimeoutMs?: number;
  /** How long (ms) the leak check waits for handles and child processes to go after `destroy()`. Default 3_000. */
  settleMs?: number;
}

/** {@link EngineConformanceOptions} with every default applied. */
export type ResolvedConformanceOptions = Required<EngineConformanceOptions>;

/** Defaults of {@link EngineConformanceOptions}. */
export const CONFORMANCE_DEFAULTS: ResolvedConformanceOptions = Object.freeze({
  shortTimeoutMs: 500,
  timeoutMs: 10_000,
  memoryLimitBytes: 64 * 1024 * 1024,
  testTimeoutMs: 60_000,
  settleMs: 3_000,
});

/** The capability flags a check may require. */
export type CapabilityFlag = "enforcesMemoryLimit" | "boundsAsyncWork" | "streamsLogs" | "abortsRunningCode";

/** What a check gets to work with. */
export interface ConformanceEnv {
  /** Create an engine; the harness destroys it after the check. */
  engine(limits?: Partial<EngineLimits>): Promise<SandboxEngine>;
  /** Resolved options. */
  readonly options: ResolvedConformanceOptions;
}

/** One contract check, run by every engine. */
export interface ConformanceCheck {
  /** Contract area (a `describe` block). */
  readonly group: string;
  /** What the check proves (an `it` name). */
  readonly name: string;
  /** Skip unless the engine declares this capability. */
  readonly requires?: CapabilityFlag;
  /** Skip unless this holds for the engine's declared capabilities (finer than `requires`). */
  readonly appliesTo?: (capabilities: EngineCapabilities) => boolean;
  /** Throws (an assertion error) when the engine breaks the contract. */
  run(env: ConformanceEnv): Promise<void>;
}

/**
 * How far below the bytes a run holds its `memoryUsed` may read: the engine's own garbage from
 * before the run, collected during it, is not the run's to count (seen: 33 KB on a worker, 66,736
 * bytes in a confined spawn child on Node 24). A count that misses the buffers reads kilobytes,
 * far below the 31.75 MiB this still asks for.
 */
const OLDER_GARBAGE_SLACK_BYTES = 256 * 1024;

const {
  TIMEOUT,
  ENGINE_DISPOSED,
  MEMORY_EXCEEDED,
  INVALID_MODULE,
  GUEST_ERROR,
  SYNTAX_ERROR,
  RESULT_NOT_TRANSFERABLE,
  CANCELLED,
} = SANDBOX_CODES;

/** What `fn` threw (as an Error with an optional code), or undefined when it returned. */
function thrownBy(fn: () => unknown): (Error & { code?: unknown }) | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
  return undefined;
}

function expectShape(result: SandboxResult): void {
  expect(typeof result.success).toBe("boolean");
  expect(typeof result.duration).toBe("number");
  expect(result.duration).toBeGreaterThanOrEqual(0);
  expect(Array.isArray(result.logs)).toBe(true);
}

async function expectValue(engine: SandboxEngine, code: string, value: unknown): Promise<SandboxResult> {
  const result = await engine.execute(code);
  expectShape(result);
  expect({ code, success: result.success, error: result.error, result: result.result }).toEqual({
    code,
    success: true,
    error: undefined,
    result: value,
  });
  return result;
}

async function expectFailure(
  engine: SandboxEngine,
  code: string,
  errorCode: string,
  options: Parameters<SandboxEngine["execute"]>[2] = {},
  context: Record<string, unknown> = {},
): Promise<SandboxResult & { error: string }> {
  const result = await engine.execute(code, context, options);
  expectShape(result);
  expect({ code, success: result.success, errorCode: result.errorCode }).toEqual({
    code,
    success: false,
    errorCode,
  });
  expect(typeof result.error).toBe("string");
  expect(result.error).not.toBe("");
  return result as SandboxResult & { error: string };
}

/** Deep prototype check: objects and arrays of a result must be host-realm plain data. */
function expectHostPlainData(value: unknown, path = "result"): void {
  if (value === null || typeof value !== "object") return;
  const proto = Object.getPrototypeOf(value);
  if (Array.isArray(value)) {
    expect(proto === Array.prototype, `${path} is a host-realm Array`).toBe(true);
    for (const [index, item] of value.entries()) expectHostPlainData(item, `${path}[${index}]`);
    return;
  }
  expect(proto === Object.prototype, `${path} is a host-realm plain object`).toBe(true);
  for (const [key, item] of Object.entries(value)) expectHostPlainData(item, `${path}.${key}`);
}

function logBytes(logs: readonly LogEntry[]): number {
  return logs.reduce((sum, entry) => sum + Buffer.byteLength(entry.message), 0);
}

/**
 * What a check expects on `engine`: V8's value, or the one for the engine its
 * `capabilities.javascriptEngine` names — only where that engine's own
 * columns or wording of the errors it raises differ (see `EngineCapabilities.javascriptEngine`).
 */
export function onEngine<T>(engine: SandboxEngine, v8: T, others: { readonly quickjs: T }): T {
  const name = engine.capabilities.javascriptEngine;
  return name === undefined || name === "v8" ? v8 : others[name];
}

/**
 * The contract, one entry per check. Every check asserts something observable,
 * so an engine that always answers `{ success: true }` (or always rejects)
 * fails every one of them — `run-engine-conformance.test.ts` proves it.
 */
export const CONFORMANCE_CHECKS: readonly ConformanceCheck[] = Object.freeze([
  // ── results ────────────────────────────────────────────────────────────
  {
    group: "results",
    name: "returns plain data as-is, copied into host-realm objects",
    async run(env) {
      const engine = await env.engine();
      await expectValue(engine, "2 + 3", 5);
      await expectValue(engine, "'sand' + 'box'", "sandbox");
      await expectValue(engine, "null", null);
      await expectValue(engine, "1 > 2", false);
      await expectValue(engine, "[1, [2, [3]], 'x']", [1, [2, [3]], "x"]);
      const nested = await expectValue(
        engine,
        "const shared = { v: 1 }; ({ n: 1.5, s: 'x', none: null, list: [1, 'two', null, { deep: true }], a: shared, b: shared })",
        { n: 1.5, s: "x", none: null, list: [1, "two", null, { deep: true }], a: { v: 1 }, b: { v: 1 } },
      );
      expectHostPlainData(nested.result);
    },
  },
  {
    group: "results",
    name: "returns undefined as a successful undefined result",
    async run(env) {
      const engine = await env.engine();
      const result = await engine.execute("console.log('ran'); undefined");
      expectShape(result);
      expect({ success: result.success, result: result.result, logs: result.logs }).toEqual({
        success: true,
        result: undefined,
        logs: [{ level: "log", message: "ran" }],
      });
      expect(result.errorCode).toBeUndefined();
    },
  },
  {
    group: "results",
    name: "awaits a returned promise",
    async run(env) {
      const engine = await env.engine();
      await expectValue(engine, "Promise.resolve(42)", 42);
      await expectValue(engine, "(async () => { await null; return { ok: true } })()", { ok: true });
      await expectValue(engine, "new Promise((resolve) => setTimeout(() => resolve('later'), 20))", "later");
    },
  },
  {
    group: "results",
    name: "runs top-level await and return like an async function body",
    async run(env) {
      const engine = await env.engine();
      await expectValue(
        engine,
        "await new Promise((r) => setTimeout(r, 10)); const v = await Promise.resolve(6); v + 1",
        7,
      );
      await expectValue(engine, "if (true) return 'early'; 'late'", "early");
      const failed = await expectFailure(engine, "await null; throw new Error('after await')", GUEST_ERROR);
      const column = onEngine(engine, 19, { quickjs: 22 });
      expect(failed.error).toBe(`Error: after await (line 1, column ${column}) (${GUEST_ERROR})`);
    },
  },
  {
    group: "results",
    name: "reports a rejected promise as a failure with its message",
    async run(env) {
      const engine = await env.engine();
      const result = await expectFailure(engine, "Promise.reject(new Error('async boom'))", GUEST_ERROR);
      const column = onEngine(engine, 16, { quickjs: 19 });
      expect(result.error).toBe(`Error: async boom (line 1, column ${column}) (${GUEST_ERROR})`);
    },
  },
  {
    group: "results",
    name: "refuses function results with SANDBOX_RESULT_NOT_TRANSFERABLE naming the path",
    async run(env) {
      const engine = await env.engine();
      for (const [code, path] of [
        ["(function named() {})", "result"],
        ["() => 1", "result"],
        ["({ data: 1, method() {} })", "result.method"],
        ["[1, class {}]", "result[1]"],
      ] as const) {
        const result = await expectFailure(engine, code, RESULT_NOT_TRANSFERABLE);
        expect(
          result.error.startsWith(`${path} cannot leave the sandbox: it is a function;`),
          result.error,
        ).toBe(true);
      }
    },
  },
  {
    group: "results",
    name: "refuses symbol results and returns BigInt values",
    async run(env) {
      const engine = await env.engine();
      for (const [code, path] of [
        ["Symbol('s')", "result"],
        ["({ key: Symbol.iterator })", "result.key"],
      ] as const) {
        const result = await expectFailure(engine, code, RESULT_NOT_TRANSFERABLE);
        expect(
          result.error.startsWith(`${path} cannot leave the sandbox: it is a symbol;`),
          result.error,
        ).toBe(true);
      }
      await expectValue(engine, "10n ** 20n", 10n ** 20n);
      await expectValue(engine, "[1n]", [1n]);
    },
  },
  {
    group: "results",
    name: "returns cyclic results with their cycles",
    async run(env) {
      const engine = await env.engine();
      const object = await expectValue(
        engine,
        "const a = { n: 1 }; a.self = a; a",
        expect.objectContaining({ n: 1 }),
      );
      const value = object.result as { self: unknown };
      expect(value.self).toBe(value);
      const list = await engine.execute("const list = [1]; list.push({ back: list }); list");
      const items = list.result as [number, { back: unknown }];
      expect(items[1].back).toBe(items);
      await expectValue(engine, "'still alive'", "still alive");
    },
  },
  // ── errors ─────────────────────────────────────────────────────────────
  {
    group: "errors",
    name: "reports a thrown Error with its name and message, without host stack frames",
    async run(env) {
      const engine = await env.engine();
      const plain = await expectFailure(engine, "throw new Error('boom')", GUEST_ERROR);
      // The column of `new Error(…)`: V8 names `new`, QuickJS the constructor's name.
      const column = onEngine(engine, 7, { quickjs: 10 });
      expect(plain.error).toBe(`Error: boom (line 1, column ${column}) (${GUEST_ERROR})`);
      const typed = await expectFailure(engine, "null.property", GUEST_ERROR);
      expect(typed.error).toBe(
        onEngine(
          engine,
          `TypeError: Cannot read properties of null (reading 'property') (line 1, column 6) (${GUEST_ERROR})`,
          {
            quickjs: `TypeError: cannot read property 'property' of null (line 1, column 1) (${GUEST_ERROR})`,
          },
        ),
      );
      const custom = await expectFailure(engine, "throw new RangeError('out of range')", GUEST_ERROR);
      expect(custom.guestError).toStrictEqual({
        name: "RangeError",
        message: "out of range",
        stack: `RangeError: out of range\n    at sandbox.js:1:${column}`,
        line: 1,
        column,
      });
      for (const result of [plain, typed, custom]) {
        expect(result.error).not.toMatch(/\n\s+at /);
        expect(JSON.stringify(result)).not.toContain(process.cwd());
        expect(JSON.stringify(result)).not.toContain("node:internal");
      }
    },
  },
  {
    group: "errors",
    name: "gives thrown non-Errors a usable message",
    async run(env) {
      const engine = await env.engine();
      for (const [code, text] of [
        ["throw 42", "Uncaught 42"],
        ["throw null", "Uncaught null"],
        ["throw undefined", "Uncaught undefined"],
        ["throw 'plain text'", "Uncaught 'plain text'"],
        ["throw { a: 1 }", "Uncaught { a: 1 }"],
      ] as const) {
        const result = await expectFailure(engine, code, GUEST_ERROR);
        expect(result.error).toBe(`${text} (${GUEST_ERROR})`);
      }
    },
  },
  {
    group: "errors",
    name: "reports a syntax error with its message and line",
    async run(env) {
      const engine = await env.engine();
      const result = await expectFailure(engine, "const a = 1;\nconst b = 2;\nconst = 3;", SYNTAX_ERROR);
      expect(result.error).toBe(`SyntaxError: Unexpected token '=' (line 3, column 7) (${SYNTAX_ERROR})`);
    },
  },
  // ── context and modules ───────────────────────────────────────────────
  {
    group: "context and modules",
    name: "copies context values in as guest globals and never mutates the host object",
    async run(env) {
      const engine = await env.engine();
      const context = { a: 2, b: 3, obj: { n: 1, list: [1] } };
      const snapshot = structuredClone(context);
      const sum = await engine.execute("a + b", context);
      expect({ success: sum.success, result: sum.result }).toEqual({ success: true, result: 5 });
      const mutated = await engine.execute("obj.n = 99; obj.list.push(2); a = 0; obj", context);
      expect({ success: mutated.success, result: mutated.result }).toEqual({
        success: true,
        result: { n: 99, list: [1, 2] },
      });
      expect(context).toEqual(snapshot);
      const realm = await engine.execute(
        "Object.getPrototypeOf(obj) === Object.prototype && obj.list instanceof Array",
        context,
      );
      expect({ success: realm.success, result: realm.result }).toEqual({ success: true, result: true });
    },
  },
  {
    group: "context and modules",
    name: "exposes registered data modules as globals (copied, never mutated)",
    async run(env) {
      const engine = await env.engine();
      const exports = { region: "eu", limits: [1, 2] };
      engine.registerModule({ name: "config", exports });
      await expectValue(engine, "config.region + config.limits.length", "eu2");
      await expectValue(engine, "config.region = 'us'; config.limits.push(3); config.region", "us");
      expect(exports).toEqual({ region: "eu", limits: [1, 2] });
      await expectValue(engine, "config.region", "eu");
    },
  },
  {
    group: "context and modules",
    name: "evaluates source modules inside the sandbox",
    async run(env) {
      const engine = await env.engine();
      engine.registerModule({ name: "mathx", source: "module.exports = { double: (n) => n * 2, pi: 3 };" });
      await expectValue(engine, "mathx.double(21) + mathx.pi", 45);
    },
  },
  {
    group: "context and modules",
    name: "unregisterModule and reset remove modules",
    async run(env) {
      const engine = await env.engine();
      engine.registerModule({ name: "gone", exports: { v: 1 } });
      await expectValue(engine, "gone.v", 1);
      expect(engine.unregisterModule("gone")).toBe(true);
      expect(engine.unregisterModule("gone")).toBe(false);
      await expectValue(engine, "typeof gone", "undefined");
      engine.registerModule({ name: "again", exports: 2 });
      await expectValue(engine, "again", 2);
      engine.reset();
      await expectValue(engine, "typeof again", "undefined");
    },
  },
  {
    group: "context and modules",
    name: "refuses a malformed or uncopyable module with SANDBOX_INVALID_MODULE naming it, keeping the one registered before",
    async run(env) {
      const engine = await env.engine();
      engine.registerModule({ name: "settings", exports: { level: 1 } });
      const uncopyable = thrownBy(() =>
        engine.registerModule({ name: "settings", exports: { run: () => 1 } }),
      );
      expect(uncopyable).toMatchObject({ code: INVALID_MODULE });
      expect(uncopyable?.message).toContain("settings");
      const badName = thrownBy(() => engine.registerModule({ name: "not a name", exports: 1 }));
      expect(badName).toMatchObject({ code: INVALID_MODULE });
      expect(badName?.message).toContain("module.name");
      await expectValue(engine, "settings.level", 1);
    },
  },
  // ── timeouts ───────────────────────────────────────────────────────────
  {
    group: "timeouts",
    name: "ends a synchronous loop with SANDBOX_TIMEOUT and stays usable",
    async run(env) {
      const engine = await env.engine();
      const result = await expectFailure(engine, "while (true) {}", TIMEOUT, {
        timeout: env.options.shortTimeoutMs,
      });
      expect(result.error).toMatch(/timed out|timeout/i);
      await expectValue(engine, "1 + 1", 2);
      const limited = await env.engine({ timeout: env.options.shortTimeoutMs });
      await expectFailure(limited, "for (;;) {}", TIMEOUT);
      const after = await limited.execute("'usable'");
      expect({ success: after.success, result: after.result }).toEqual({ success: true, result: "usable" });
    },
  },
  {
    group: "timeouts",
    name: "ends endless microtask loops with SANDBOX_TIMEOUT and stays usable",
    requires: "boundsAsyncWork",
    async run(env) {
      const engine = await env.engine();
      const timeout = env.options.shortTimeoutMs;
      await expectFailure(engine, "(async () => { for (;;) await null; })()", TIMEOUT, { timeout });
      // Flat: each reaction queues the next and keeps nothing. (Returning the next promise would
      // nest the chain, which grows the heap; on Node 24 it reaches a memory limit first.)
      await expectFailure(
        engine,
        "Promise.resolve().then(function f() { Promise.resolve().then(f); })",
        TIMEOUT,
        {
          timeout,
        },
      );
      await expectValue(engine, "'usable'", "usable");
    },
  },
  {
    group: "timeouts",
    name: "ends a synchronous loop in a timer callback or after a host call's reply with SANDBOX_TIMEOUT",
    requires: "boundsAsyncWork",
    async run(env) {
      const engine = await env.engine();
      const timeout = env.options.shortTimeoutMs;
      const inTimer = await expectFailure(
        engine,
        "setTimeout(() => { for (;;) {} }, 0); new Promise(() => {})",
        TIMEOUT,
        { timeout },
      );
      const afterReply = await expectFailure(engine, "await tools.ping(); for (;;) {}", TIMEOUT, {
        timeout,
        hostCalls: { names: ["ping"], call: async () => "pong" },
      });
      const message = `Execution timed out after ${timeout} ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)`;
      expect([inTimer.error, afterReply.error]).toEqual([message, message]);
      await expectValue(engine, "'usable'", "usable");
    },
  },
  {
    group: "timeouts",
    name: "ends a getter on the global object that never returns with SANDBOX_TIMEOUT",
    async run(env) {
      // On Node 22 and 24, node's intercepted vm global swallows the watchdog's termination
      // inside a global accessor and runs the getter again: a hang unless the realm avoids it.
      const engine = await env.engine();
      const timeout = env.options.shortTimeoutMs;
      const asIdentifier = await expectFailure(
        engine,
        "Object.defineProperty(globalThis, 'spin', { get() { for (;;) {} } }); spin",
        TIMEOUT,
        { timeout },
      );
      const asMember = await expectFailure(
        engine,
        "Object.defineProperty(globalThis, 'spin', { get() { for (;;) {} } }); globalThis.spin",
        TIMEOUT,
        { timeout },
      );
      const message = `Execution timed out after ${timeout} ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)`;
      expect([asIdentifier.error, asMember.error]).toEqual([message, message]);
      await expectValue(engine, "'usable'", "usable");
    },
  },
  {
    group: "timeouts",
    name: "ends never-settling promises and outliving timers with SANDBOX_TIMEOUT",
    requires: "boundsAsyncWork",
    async run(env) {
      const engine = await env.engine();
      const timeout = env.options.shortTimeoutMs;
      await expectFailure(engine, "new Promise(() => {})", TIMEOUT, { timeout });
      await expectFailure(engine, "new Promise((resolve) => setTimeout(resolve, 600000))", TIMEOUT, {
        timeout,
      });
      await expectValue(engine, "'usable'", "usable");
    },
  },
  // ── timers ─────────────────────────────────────────────────────────────
  {
    group: "timers",
    name: "provides setTimeout, setInterval, clearTimeout, clearInterval and queueMicrotask",
    async run(env) {
      const engine = await env.engine();
      await expectValue(
        engine,
        "[setTimeout, setInterval, clearTimeout, clearInterval, queueMicrotask].map((f) => typeof f).join()",
        "function,function,function,function,function",
      );
      await expectValue(
        engine,
        "new Promise((done) => { let n = 0; const id = setInterval(() => { n++; if (n === 3) { clearInterval(id); done(n); } }, 5); })",
        3,
      );
      await expectValue(
        engine,
        "new Promise((done) => { const id = setTimeout(() => done('cleared timer fired'), 10); clearTimeout(id); setTimeout(() => done('ok'), 40); })",
        "ok",
      );
      await expectValue(engine, "new Promise((done) => setTimeout((a, b) => done(a + b), 1, 2, 3))", 5);
      await expectValue(
        engine,
        "new Promise((done) => { const order = []; queueMicrotask(() => order.push('micro')); order.push('sync'); setTimeout(() => done(order.join()), 0); })",
        "sync,micro",
      );
    },
  },
  {
    group: "timers",
    name: "awaits a sleeping async function",
    async run(env) {
      const engine = await env.engine();
      await expectValue(
        engine,
        "(async () => { await new Promise((r) => setTimeout(r, 50)); return 'slept'; })()",
        "slept",
      );
    },
  },
  {
    group: "timers",
    name: "keeps the execution alive until a pending timer fires",
    async run(env) {
      const engine = await env.engine();
      const result = await engine.execute("setTimeout(() => console.log('fired'), 50); 'sync result'");
      expect({ success: result.success, result: result.result, logs: result.logs }).toEqual({
        success: true,
        result: "sync result",
        logs: [{ level: "log", message: "fired" }],
      });
    },
  },
  {
    group: "timers",
    name: "cancels every timer when the execution ends with an error",
    async run(env) {
      const engine = await env.engine();
      const late: LogEntry[] = [];
      let resolved = false;
      const onLog = (entry: LogEntry): void => {
        if (resolved) late.push(entry);
      };
      const result = await engine.execute(
        "setTimeout(() => console.log('late timeout'), 150); setInterval(() => console.log('late interval'), 20); throw new Error('early')",
        {},
        { onLog },
      );
      resolved = true;
      expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
        success: false,
        errorCode: GUEST_ERROR,
        error: `Error: early (line 1, column ${onEngine(engine, 112, { quickjs: 115 })}) (${GUEST_ERROR})`,
      });
      await sleep(400);
      expect(late).toEqual([]);
    },
  },
  {
    group: "timers",
    name: "cancels every timer when the execution times out",
    requires: "boundsAsyncWork",
    async run(env) {
      const engine = await env.engine();
      const late: LogEntry[] = [];
      let resolved = false;
      const result = await engine.execute(
        "setInterval(() => console.log('tick'), 10); setTimeout(() => console.log('late'), 700); new Promise(() => {})",
        {},
        {
          timeout: env.options.shortTimeoutMs,
          onLog: (entry) => {
            if (resolved) late.push(entry);
          },
        },
      );
      resolved = true;
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: TIMEOUT,
      });
      await sleep(900);
      expect(late).toEqual([]);
    },
  },
  // ── memory ─────────────────────────────────────────────────────────────
  {
    group: "memory",
    name: "ends an allocation bomb with SANDBOX_MEMORY_EXCEEDED; host and engine survive",
    requires: "enforcesMemoryLimit",
    async run(env) {
      const engine = await env.engine({ memoryLimit: env.options.memoryLimitBytes, timeout: 60_000 });
      await expectFailure(
        engine,
        "const hoard = []; for (;;) hoard.push(new Array(1e6).fill(hoard.length));",
        MEMORY_EXCEEDED,
      );
      await expectValue(engine, "'survived'", "survived");
    },
  },
  // One table of bombs, every kind of memory, sync and yielding; what an engine must stop is its
  // declared capabilities.memoryAccounting (see memory-bombs.ts), never its name.
  ...MEMORY_BOMB_ROWS.map(
    (row): ConformanceCheck => ({
      group: "memory",
      name: `ends a ${row.pace} ${row.kind} bomb with SANDBOX_MEMORY_EXCEEDED where memoryAccounting bounds it; host and engine survive`,
      appliesTo: (capabilities) => expectedBombOutcome(row, capabilities) !== undefined,
      async run(env) {
        const limit = env.options.memoryLimitBytes;
        const engine = await env.engine({ memoryLimit: limit, timeout: 60_000 });
        const result = await engine.execute(row.code(limit));
        expectShape(result);
        const outcome = result.success ? result.result : result.errorCode;
        // "absent": the realm has no constructor for this kind, so nothing can be allocated that way.
        expect([MEMORY_EXCEEDED, "absent"]).toContain(outcome);
        await expectValue(engine, "'survived'", "survived");
      },
    }),
  ),
  {
    group: "memory",
    name: "memoryUsed counts the array buffers a run holds where memoryAccounting counts them",
    appliesTo: (capabilities) =>
      capabilities.memoryAccounting !== undefined &&
      capabilities.memoryAccounting.kinds.arrayBuffers !== false,
    async run(env) {
      const engine = await env.engine({ memoryLimit: 128 * 1024 * 1024 });
      const held = 32 * 1024 * 1024;
      const result = await expectValue(
        engine,
        `const keep = new Uint8Array(${held}).fill(1); keep.length`,
        held,
      );
      // The realm shares its isolate with the engine's own runtime (see OLDER_GARBAGE_SLACK_BYTES).
      expect(result.memoryUsed).toBeGreaterThanOrEqual(held - OLDER_GARBAGE_SLACK_BYTES);
      expect(result.usage?.heapBytes).toBe(result.memoryUsed);
    },
  },
  // ── console ────────────────────────────────────────────────────────────
  {
    group: "console",
    name: "captures log/info/warn/error/debug with their level, in order",
    async run(env) {
      const engine = await env.engine();
      const result = await engine.execute(
        "console.log('a'); console.info('b'); console.warn('c'); console.error('d'); console.debug('e'); console.log('f', 1, true, null); 0",
      );
      expect({ success: result.success, logs: result.logs }).toEqual({
        success: true,
        logs: [
          { level: "log", message: "a" },
          { level: "info", message: "b" },
          { level: "warn", message: "c" },
          { level: "error", message: "d" },
          { level: "debug", message: "e" },
          { level: "log", message: "f 1 true null" },
        ],
      });
    },
  },
  {
    group: "console",
    name: "truncates output at maxOutputSize bytes with the sentinel",
    async run(env) {
      const code = "console.log('0123456789'); console.log('abcdefghij'); console.log('never kept'); 'done'";
      const expected = [
        { level: "log", message: "0123456789" },
        { level: "log", message: "abcdef" },
        { level: "warn", message: truncationSentinel(16) },
      ];
      const limited = await env.engine({ maxOutputSize: 16 });
      const byLimit = await limited.execute(code);
      expect({ success: byLimit.success, result: byLimit.result, logs: byLimit.logs }).toEqual({
        success: true,
        result: "done",
        logs: expected,
      });
      const engine = await env.engine();
      const byOption = await engine.execute(code, {}, { maxOutputSize: 16 });
      expect({ success: byOption.success, logs: byOption.logs }).toEqual({ success: true, logs: expected });
    },
  },
  {
    group: "console",
    name: "bounds a console flood (1e5 lines, and an endless loop until the timeout)",
    async run(env) {
      const engine = await env.engine({ maxOutputSize: 1024 });
      const budget = 1024;
      let delivered = 0;
      const onLog = (): void => {
        delivered++;
      };
      const lines = await engine.execute(
        "for (let i = 0; i < 1e5; i++) console.log('x'.repeat(1000) + i); 'flooded'",
        {},
        { onLog },
      );
      expect({ success: lines.success, result: lines.result }).toEqual({ success: true, result: "flooded" });
      expect(lines.logs.at(-1)).toEqual({ level: "warn", message: truncationSentinel(budget) });
      expect(logBytes(lines.logs.slice(0, -1))).toBeLessThanOrEqual(budget);
      expect(delivered).toBeLessThanOrEqual(lines.logs.length);
      const endless = await expectFailure(engine, "for (;;) console.log('x'.repeat(1000))", TIMEOUT, {
        timeout: env.options.shortTimeoutMs,
        onLog,
      });
      expect(endless.logs.at(-1)).toEqual({ level: "warn", message: truncationSentinel(budget) });
      expect(logBytes(endless.logs.slice(0, -1))).toBeLessThanOrEqual(budget);
      expect(delivered).toBeLessThanOrEqual(lines.logs.length + endless.logs.length);
      // Empty lines cost a byte each, so `console.log()` in a loop is bounded too.
      const empty = await expectFailure(engine, "for (;;) console.log()", TIMEOUT, {
        timeout: env.options.shortTimeoutMs,
      });
      expect(empty.logs.length).toBeLessThanOrEqual(budget + 1);
      expect(empty.logs.at(-1)).toEqual({ level: "warn", message: truncationSentinel(budget) });
    },
  },
  {
    group: "console",
    name: "formats a console line only to about the output budget, and a line that fits whole",
    async run(env) {
      const engine = await env.engine({ maxOutputSize: 1024 });
      // Each of 1e5 values is a Proxy that counts how often `console.log` looks at it: past the
      // budget the line stops listing entries, so it formats a few hundred of them (every one
      // before the budget existed).
      const huge = await engine.execute(`
        let looked = 0;
        const counting = { getPrototypeOf(t) { looked++; return Reflect.getPrototypeOf(t); } };
        const target = {};
        for (let i = 0; i < 1e5; i++) target["k" + i] = new Proxy({}, counting);
        console.log(target);
        looked`);
      expect({ success: huge.success, last: huge.logs.at(-1) }).toEqual({
        success: true,
        last: { level: "warn", message: truncationSentinel(1024) },
      });
      expect(huge.result).toBeLessThan(5000);
      // Nested three deep (console.log's depth) and just under the budget: printed whole.
      const nested = await engine.execute(`
        const value = {};
        for (let a = 0; a < 4; a++) {
          const level = (value["a" + a] = {});
          for (let b = 0; b < 4; b++) level["b" + b] = { c0: "x".repeat(8), c1: [1, 2, 3], c2: { d: 1 } };
        }
        console.log(value);
        JSON.stringify(value)`);
      const text = inspect(JSON.parse(String(nested.result)));
      expect(Buffer.byteLength(text)).toBeGreaterThan(900);
      expect(Buffer.byteLength(text)).toBeLessThanOrEqual(1024);
      expect({ success: nested.success, logs: nested.logs }).toEqual({
        success: true,
        logs: [{ level: "log", message: text }],
      });
    },
  },
  {
    group: "console",
    name: "delivers every captured entry to options.onLog before execute resolves",
    async run(env) {
      const engine = await env.engine();
      const seen: LogEntry[] = [];
      const result = await engine.execute(
        "console.log('one'); console.warn('two'); Promise.resolve().then(() => console.error('three')).then(() => 3)",
        {},
        { onLog: (entry) => seen.push(entry), maxOutputSize: 1024 },
      );
      const expected = [
        { level: "log", message: "one" },
        { level: "warn", message: "two" },
        { level: "error", message: "three" },
      ];
      expect({ success: result.success, result: result.result, logs: result.logs }).toEqual({
        success: true,
        result: 3,
        logs: expected,
      });
      expect(seen).toEqual(expected);
    },
  },
  {
    group: "console",
    name: "streams a log emitted before a 300 ms sleep before execute resolves",
    requires: "streamsLogs",
    async run(env) {
      const engine = await env.engine();
      let resolved = false;
      let lateArrived = false;
      let lateArrivedRightAfterEarly: boolean | undefined;
      const arrivals: Array<{ message: string; beforeResolve: boolean }> = [];
      const result = await engine.execute(
        "(async () => { console.log('early'); await new Promise((r) => setTimeout(r, 300)); console.log('late'); return 'done'; })()",
        {},
        {
          onLog: (entry) => {
            arrivals.push({ message: entry.message, beforeResolve: !resolved });
            if (entry.message === "late") lateArrived = true;
            // A replaying engine delivers "late" in the same burst as "early";
            // a streaming one delivers "early" while the guest still sleeps.
            if (entry.message === "early") setImmediate(() => (lateArrivedRightAfterEarly = lateArrived));
          },
        },
      );
      resolved = true;
      await new Promise((resolve) => setImmediate(resolve));
      expect({ success: result.success, result: result.result }).toEqual({ success: true, result: "done" });
      expect({ arrivals, lateArrivedRightAfterEarly }).toEqual({
        arrivals: [
          { message: "early", beforeResolve: true },
          { message: "late", beforeResolve: true },
        ],
        lateArrivedRightAfterEarly: false,
      });
    },
  },
  // ── concurrency ────────────────────────────────────────────────────────
  {
    group: "concurrency",
    name: "keeps concurrent executions' results, logs and contexts apart",
    async run(env) {
      const engine = await env.engine();
      const ids = [0, 1, 2, 3];
      const results = await Promise.all(
        ids.map((id) =>
          engine.execute(
            "console.log('run ' + id); (async () => { await new Promise((r) => setTimeout(r, delay)); globalThis.mine = id; return { id, mine }; })()",
            { id, delay: (ids.length - id) * 30 },
          ),
        ),
      );
      expect(results.map((r) => ({ success: r.success, result: r.result, logs: r.logs }))).toEqual(
        ids.map((id) => ({
          success: true,
          result: { id, mine: id },
          logs: [{ level: "log", message: `run ${id}` }],
        })),
      );
    },
  },
  // ── lifecycle ──────────────────────────────────────────────────────────
  {
    group: "lifecycle",
    name: "isolates globals and prototypes between executions",
    async run(env) {
      const engine = await env.engine();
      await expectValue(
        engine,
        "globalThis.leaked = 1; var hoisted = 2; Array.prototype.polluted = 3; Object.prototype.tainted = 4; 'written'",
        "written",
      );
      await expectValue(
        engine,
        "[typeof leaked, typeof hoisted, typeof [].polluted, typeof ({}).tainted].join()",
        "undefined,undefined,undefined,undefined",
      );
    },
  },
  {
    group: "lifecycle",
    name: "destroy() is idempotent; later executions resolve SANDBOX_ENGINE_DISPOSED",
    async run(env) {
      const engine = await env.engine();
      await expectValue(engine, "1 + 1", 2);
      await engine.destroy();
      await engine.destroy();
      const result = await expectFailure(engine, "1 + 1", ENGINE_DISPOSED);
      expect(result.result).toBeUndefined();
    },
  },
  {
    group: "lifecycle",
    name: "registerModule after destroy() throws SANDBOX_ENGINE_DISPOSED",
    async run(env) {
      const engine = await env.engine();
      await expectValue(engine, "1 + 1", 2);
      await engine.destroy();
      const thrown = thrownBy(() => engine.registerModule({ name: "late", exports: 1 }));
      expect(thrown).toMatchObject({ code: ENGINE_DISPOSED });
    },
  },
  {
    group: "lifecycle",
    name: "destroy() leaves no handles or child processes behind",
    async run(env) {
      const resourcesBefore = activeResources();
      const childrenBefore = childPids();
      const engine = await env.engine();
      await expectValue(
        engine,
        "(async () => { await new Promise((r) => setTimeout(r, 10)); return 'ok'; })()",
        "ok",
      );
      await expectFailure(engine, "while (true) {}", TIMEOUT, { timeout: env.options.shortTimeoutMs });
      await expectValue(engine, "setTimeout(() => {}, 20); 'pending timer'", "pending timer");
      await engine.destroy();
      const deadline = Date.now() + env.options.settleMs;
      let grown: string[] = [];
      let extraChildren: number[] = [];
      for (;;) {
        grown = grownResources(resourcesBefore, activeResources());
        const children = childPids();
        extraChildren =
          children === undefined || childrenBefore === undefined
            ? []
            : [...children].filter((pid) => !childrenBefore.has(pid));
        if ((grown.length === 0 && extraChildren.length === 0) || Date.now() > deadline) break;
        await sleep(50);
      }
      expect({ grownResources: grown, extraChildProcesses: extraChildren }).toEqual({
        grownResources: [],
        extraChildProcesses: [],
      });
    },
  },
  // ── host calls: tools.<name>(input) ───────────────────────────────────
  {
    group: "host calls",
    name: "answers tools.<name>() calls with copies both ways and counts them in usage",
    async run(env) {
      const engine = await env.engine();
      const seen: unknown[] = [];
      const result = await engine.execute(
        "const r = await tools.echo({ when: new Date(1), tags: new Set(['a']), n: 1 }); [r.when instanceof Date, r.tags.has('a'), r.n + 1, typeof tools.echo, Object.isFrozen(tools)]",
        {},
        {
          hostCalls: {
            names: ["echo"],
            async call(name, input) {
              seen.push([name, input]);
              return input;
            },
          },
        },
      );
      expect({ success: result.success, result: result.result, error: result.error }).toEqual({
        success: true,
        result: [true, true, 2, "function", true],
        error: undefined,
      });
      expect(seen).toEqual([["echo", { when: new Date(1), tags: new Set(["a"]), n: 1 }]]);
      expect(result.usage?.toolCalls).toBe(1);
      expect(result.usage?.toolBytes).toBeGreaterThan(0);
    },
  },
  {
    group: "host calls",
    name: "a failing host call rejects in the guest with its name, message and tool only",
    async run(env) {
      const engine = await env.engine();
      const failing = Object.assign(new Error("no weather today"), {
        name: "ToolError",
        tool: "weather",
        secret: "host-only",
      });
      const result = await engine.execute(
        "let seen; try { await tools.weather({ city: 'Paris' }); } catch (e) { seen = [e instanceof Error, e.name, e.message, e.tool, e.secret, String(e.stack).includes('/')]; } seen",
        {},
        { hostCalls: { names: ["weather"], call: () => Promise.reject(failing) } },
      );
      expect(result.result).toEqual([true, "ToolError", "no weather today", "weather", undefined, false]);
    },
  },
  {
    group: "host calls",
    name: "100 concurrent host calls from one execution complete with the right answers",
    async run(env) {
      const engine = await env.engine();
      const result = await engine.execute(
        "const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => tools.square(i))); answers.reduce((a, b) => a + b, 0)",
        {},
        {
          hostCalls: {
            names: ["square"],
            call: async (_name, input) => {
              await new Promise((resolve) => setTimeout(resolve, (input as number) % 7));
              return (input as number) ** 2;
            },
          },
        },
      );
      expect({ success: result.success, result: result.result }).toEqual({ success: true, result: 328_350 });
      expect(result.usage?.toolCalls).toBe(100);
    },
  },
  {
    group: "host calls",
    name: "a call still pending when the run times out is dropped; nothing happens after execute resolves",
    async run(env) {
      const engine = await env.engine();
      let answer: ((value: unknown) => void) | undefined;
      const late: LogEntry[] = [];
      let resolved = false;
      const result = await engine.execute(
        "const v = await tools.slow(1); console.log('after', v); v",
        {},
        {
          timeout: env.options.shortTimeoutMs,
          onLog: (entry) => {
            if (resolved) late.push(entry);
          },
          hostCalls: {
            names: ["slow"],
            call: () =>
              new Promise((resolve) => {
                answer = resolve;
              }),
          },
        },
      );
      resolved = true;
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: TIMEOUT,
      });
      answer?.(42);
      await sleep(200);
      expect(late).toEqual([]);
      await expectValue(engine, "'still usable'", "still usable");
    },
  },
  // ── cancellation ───────────────────────────────────────────────────────
  {
    group: "cancellation",
    name: "options.signal: an aborted signal never starts the run; an abort ends a waiting run with SANDBOX_CANCELLED",
    async run(env) {
      const engine = await env.engine();
      const before = await engine.execute("console.log('ran'); 1", {}, { signal: AbortSignal.abort() });
      expect({ success: before.success, errorCode: before.errorCode, logs: before.logs }).toEqual({
        success: false,
        errorCode: CANCELLED,
        logs: [],
      });
      const controller = new AbortController();
      const pending = engine.execute(
        "console.log('waiting'); await new Promise((r) => setTimeout(r, 60000)); 'late'",
        {},
        {
          signal: controller.signal,
          timeout: 30_000,
        },
      );
      setTimeout(() => controller.abort(), 100);
      const during = await pending;
      expect({ success: during.success, errorCode: during.errorCode }).toEqual({
        success: false,
        errorCode: CANCELLED,
      });
      await expectValue(engine, "'after cancel'", "after cancel");
    },
  },
  {
    group: "cancellation",
    name: "options.signal stops synchronous guest code where the engine declares abortsRunningCode",
    requires: "abortsRunningCode",
    async run(env) {
      const engine = await env.engine();
      const controller = new AbortController();
      const pending = engine.execute("while (true) {}", {}, { signal: controller.signal, timeout: 30_000 });
      setTimeout(() => controller.abort(), 200);
      const result = await pending;
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: CANCELLED,
      });
      await expectValue(engine, "'after cancel'", "after cancel");
    },
  },
  // ── usage ──────────────────────────────────────────────────────────────
  {
    group: "usage",
    name: "every result carries usage: wall time, output bytes, tool calls, and CPU where the engine measures it",
    async run(env) {
      const engine = await env.engine();
      const result = await engine.execute(
        "let n = 0; for (let i = 0; i < 1e6; i++) n += i; console.log('héllo'); n",
      );
      const usage = result.usage;
      expect(usage === undefined ? undefined : Object.keys(usage).sort()).toEqual(
        [
          "wallMs",
          "outputBytes",
          "toolCalls",
          "toolBytes",
          ...(result.memoryUsed === undefined ? [] : ["heapBytes"]),
          ...(engine.capabilities.measuresCpu === false ? [] : ["cpuMs"]),
        ].sort(),
      );
      expect({
        outputBytes: usage?.outputBytes,
        toolCalls: usage?.toolCalls,
        toolBytes: usage?.toolBytes,
      }).toEqual({
        outputBytes: 6,
        toolCalls: 0,
        toolBytes: 0,
      });
      expect(usage?.wallMs).toBe(result.duration);
      if (engine.capabilities.measuresCpu !== false) {
        expect(usage?.cpuMs).toBeGreaterThan(0);
        expect(usage?.cpuMs).toBeLessThanOrEqual(result.duration + 1);
      }
    },
  },
  // ── parity: one table, exact values, every engine ─────────────────────
  ...PARITY_ROWS.map(
    (row): ConformanceCheck => ({
      group: "parity",
      name: row.name,
      async run(env) {
        await checkParityRow(await env.engine(), row);
      },
    }),
  ),
]);

/** True when `capabilities` lets the check run. */
export function checkApplies(check: ConformanceCheck, capabilities: EngineCapabilities): boolean {
  return (
    (check.requires === undefined || capabilities[check.requires] === true) &&
    (check.appliesTo === undefined || check.appliesTo(capabilities))
  );
}
