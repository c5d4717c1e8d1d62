import { readFileSync } from "node:fs";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import {
  createIsolatedVmFactory,
  ISOLATE_CAPABILITIES,
  ISOLATE_HELPER_CAPABILITIES,
  IsolateEngine,
  type IsolateEngineOptions,
} from "../src/index.js";
import { HELPER_BACKSTOP_MS, helperEnv } from "../src/internal/isolate-helper.js";
import { gone, isAlive } from "./support/process-gone.js";

// Helper mode (the default) against the real isolated-vm in real child processes
// (the built dist/isolate-helper.js). These pass `process: "helper"` to say so;
// test/node-host.test.ts runs the defaults from a plain `node`, with and without
// --no-node-snapshot, and test/lifeline.test.ts and test/fatal-errors.test.ts a
// whole application.

const MIB = 1024 * 1024;
const live: IsolateEngine[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function engine(options: IsolateEngineOptions = {}): IsolateEngine {
  const created = new IsolateEngine({ timeout: 10_000, ...options, process: "helper" });
  live.push(created);
  return created;
}

/** The whole result but for the measured fields. */
function outcome(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed" | "usage"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

function helperPid(of: IsolateEngine): number {
  const pid = of.helperPid;
  if (pid === undefined) throw new Error("no helper runs");
  return pid;
}

afterEach(async () => {
  await Promise.all(live.splice(0).map((e) => e.destroy()));
});

describe('IsolateEngine with process: "helper"', () => {
  it("is the default", () => {
    const isolate = new IsolateEngine();
    live.push(isolate);
    expect([isolate.processMode, isolate.capabilities]).toEqual(["helper", ISOLATE_HELPER_CAPABILITIES]);
  });

  it("runs the code in a helper child process, started on the first execution", async () => {
    const isolate = engine();
    expect([isolate.processMode, isolate.helperPid, isolate.helperPids]).toEqual(["helper", undefined, []]);
    expect(outcome(await isolate.execute("2 + 3"))).toStrictEqual({ success: true, result: 5, logs: [] });
    const pid = helperPid(isolate);
    expect(pid).not.toBe(process.pid);
    expect(outcome(await isolate.execute("[typeof process, typeof require]"))).toStrictEqual({
      success: true,
      result: ["undefined", "undefined"],
      logs: [],
    });
    // One caller, one after the other: one helper.
    expect(isolate.helperPids).toEqual([pid]);
  });

  it("declares the same guarantees, naming the helper process and what a crash costs in its tier", () => {
    expect(engine().capabilities).toStrictEqual({
      securityBoundary: true,
      tier: "V8 isolate (isolated-vm) in a helper process: a security boundary — separate heap with a memory limit (array buffers counted, Wasm memory capped), no host objects reachable; a fatal V8 error ends the helper and fails the executions it held (SANDBOX_ENGINE_CRASHED), not the application; the helper is not confined by the OS",
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
    expect(engine().capabilities).toBe(ISOLATE_HELPER_CAPABILITIES);
  });

  it("answers tools.echo(x) through options.hostCalls, values through the codec both ways", async () => {
    const isolate = engine();
    const seen: unknown[] = [];
    const hostCalls = {
      names: ["echo", "broken"],
      async call(name: string, input: unknown) {
        seen.push([name, input]);
        if (name === "broken") throw Object.assign(new Error("no such city"), { tool: "broken" });
        return input;
      },
    };
    const result = await isolate.execute(
      "const back = await tools.echo({ at: new Date(5), m: new Map([[1, 2n]]) });\nlet failed;\ntry { await tools.broken(1); } catch (e) { failed = [e.name, e.message, e.tool]; }\n[back, failed]",
      {},
      { hostCalls },
    );
    expect(outcome(result)).toStrictEqual({
      success: true,
      result: [{ at: new Date(5), m: new Map([[1, 2n]]) }, ["Error", "no such city", "broken"]],
      logs: [],
    });
    expect(seen).toEqual([
      ["echo", { at: new Date(5), m: new Map([[1, 2n]]) }],
      ["broken", 1],
    ]);
    expect(result.usage?.toolCalls).toBe(2);
  });

  it("streams each console line to onLog while the code still runs, in order", async () => {
    const isolate = engine();
    const streamed: LogEntry[] = [];
    let streamedBeforeTheEnd = -1;
    const result = await isolate.execute(
      "console.log('first', { a: 1 }); console.warn('second'); await new Promise((r) => setTimeout(r, 200)); 'end'",
      {},
      {
        onLog: (entry) => {
          streamed.push(entry);
          if (streamed.length === 2) setTimeout(() => (streamedBeforeTheEnd = streamed.length), 50);
        },
      },
    );
    const logs = [
      { level: "log", message: "first { a: 1 }" },
      { level: "warn", message: "second" },
    ];
    expect(outcome(result)).toStrictEqual({ success: true, result: "end", logs });
    expect(streamed).toEqual(logs);
    expect(streamedBeforeTheEnd).toBe(2);
  });

  it("times out sync loops and pending promises, and the same helper runs the next execution", async () => {
    const isolate = engine();
    expect(outcome(await isolate.execute("1"))).toStrictEqual({ success: true, result: 1, logs: [] });
    const pid = helperPid(isolate);
    for (const code of ["for (;;) {}", "await new Promise(() => {})"]) {
      expect(outcome(await isolate.execute(code, {}, { timeout: 150 }))).toStrictEqual({
        success: false,
        error:
          "Execution timed out after 150 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
        errorCode: SANDBOX_CODES.TIMEOUT,
        logs: [],
      });
    }
    expect(outcome(await isolate.execute("'usable'"))).toStrictEqual({
      success: true,
      result: "usable",
      logs: [],
    });
    expect(isolate.helperPid).toBe(pid);
  });

  it("reports SANDBOX_MEMORY_EXCEEDED; the helper replaces the isolate and survives", async () => {
    const isolate = engine({ memoryLimit: 16 * MIB });
    expect((await isolate.execute("1")).success).toBe(true);
    const pid = helperPid(isolate);
    const bomb = await isolate.execute("const hoard = []; for (;;) hoard.push(new Array(1e5).fill(1));");
    expect(outcome(bomb)).toStrictEqual({
      success: false,
      error: `Execution exceeded its memory limit of ${16 * MIB} bytes (SANDBOX_MEMORY_EXCEEDED)`,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      logs: [],
    });
    expect(outcome(await isolate.execute("'fresh isolate'"))).toStrictEqual({
      success: true,
      result: "fresh isolate",
      logs: [],
    });
    expect(isolate.helperPid).toBe(pid);
  });

  it("options.signal cancels running code at once, and refuses an already aborted signal", async () => {
    const isolate = engine({ timeout: 20_000 });
    const controller = new AbortController();
    let started!: () => void;
    const startedLogged = new Promise<void>((resolve) => {
      started = resolve;
    });
    const running = isolate.execute(
      "console.log('started'); for (;;) {}",
      {},
      {
        signal: controller.signal,
        onLog: () => started(),
      },
    );
    await startedLogged;
    const abortedAt = performance.now();
    controller.abort();
    expect(outcome(await running)).toStrictEqual({
      success: false,
      error: "Execution was cancelled (SANDBOX_CANCELLED)",
      errorCode: SANDBOX_CODES.CANCELLED,
      logs: [{ level: "log", message: "started" }],
    });
    // Not at the 20 s timeout: the abort ended the running loop (no speed claim here; see the bench).
    expect(performance.now() - abortedAt).toBeLessThan(10_000);
    expect(outcome(await isolate.execute("1", {}, { signal: controller.signal }))).toStrictEqual({
      success: false,
      error: "Execution was cancelled before it started (SANDBOX_CANCELLED)",
      errorCode: SANDBOX_CODES.CANCELLED,
      logs: [],
    });
    // The busy isolate was disposed in the helper: the loop no longer runs there.
    expect(outcome(await isolate.execute("'after'"))).toStrictEqual({
      success: true,
      result: "after",
      logs: [],
    });
  });

  it("serves concurrent executions from two helpers (or one with helpers: 1), each with its own context, logs and result", async () => {
    const isolate = engine();
    const runs = [1, 2, 3, 4].map((n) =>
      isolate.execute(
        "globalThis.mine = n; console.log('run', n); await new Promise((r) => setTimeout(r, 50 * (5 - n))); [n, mine, n * 10]",
        { n },
      ),
    );
    const pid = helperPid(isolate);
    expect((await Promise.all(runs)).map(outcome)).toStrictEqual(
      [1, 2, 3, 4].map((n) => ({
        success: true,
        result: [n, n, n * 10],
        logs: [{ level: "log", message: `run ${n}` }],
      })),
    );
    expect(isolate.helperPid).toBe(pid);
    expect(isolate.helperPids).toHaveLength(2);
    const single = engine({ helpers: 1 });
    expect((await Promise.all([single.execute("1"), single.execute("2")])).map((r) => r.result)).toEqual([
      1, 2,
    ]);
    expect(single.helperPids).toHaveLength(1);
  });

  it("passes registered modules to the helper, and reset() drops them", async () => {
    const isolate = engine();
    isolate.registerModule({ name: "rates", exports: { eur: 1.25 } });
    isolate.registerModule({ name: "double", source: "module.exports = (x) => x * 2;" });
    expect(outcome(await isolate.execute("double(amount * rates.eur)", { amount: 100 }))).toStrictEqual({
      success: true,
      result: 250,
      logs: [],
    });
    isolate.reset();
    expect(outcome(await isolate.execute("[typeof rates, typeof double]"))).toStrictEqual({
      success: true,
      result: ["undefined", "undefined"],
      logs: [],
    });
  });

  it("fails every execution the helper held with SANDBOX_ENGINE_CRASHED when it is killed, and starts a new one", async () => {
    const isolate = engine({ helpers: 1 });
    expect((await isolate.execute("1")).success).toBe(true);
    const pid = helperPid(isolate);
    const running = [isolate.execute("for (;;) {}"), isolate.execute("await new Promise(() => {})")];
    await sleep(200);
    process.kill(pid, "SIGKILL");
    const failed = {
      success: false,
      error: `The isolate helper process (pid ${pid}) was killed by SIGKILL (by another process, or by the system's out-of-memory killer) while the code ran; every execution it held failed with it, and the next execution starts a new helper (SANDBOX_ENGINE_CRASHED)`,
      errorCode: SANDBOX_CODES.ENGINE_CRASHED,
      logs: [],
    };
    expect((await Promise.all(running)).map(outcome)).toStrictEqual([failed, failed]);
    expect(await gone(pid)).toBe(true);
    expect(outcome(await isolate.execute("2 + 3"))).toStrictEqual({ success: true, result: 5, logs: [] });
    expect(helperPid(isolate)).not.toBe(pid);
  });

  it.skipIf(process.platform === "win32")(
    "ends a run the helper does not report in time as SANDBOX_TIMEOUT and replaces the stuck helper, failing the other runs it held",
    async () => {
      const isolate = engine({ helpers: 1 });
      expect((await isolate.execute("1")).success).toBe(true);
      const pid = helperPid(isolate);
      process.kill(pid, "SIGSTOP"); // a helper that can no longer answer
      const other = isolate.execute("await new Promise(() => {})", {}, { timeout: 8000 });
      const started = performance.now();
      expect(outcome(await isolate.execute("2 + 3", {}, { timeout: 200 }))).toStrictEqual({
        success: false,
        error:
          "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
        errorCode: SANDBOX_CODES.TIMEOUT,
        logs: [],
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(200 + HELPER_BACKSTOP_MS - 5);
      expect(outcome(await other)).toStrictEqual({
        success: false,
        error: `The isolate helper process (pid ${pid}) was killed by the engine because it stopped answering (an execution's deadline passed without its report) while the code ran; every execution it held failed with it, and the next execution starts a new helper (SANDBOX_ENGINE_CRASHED)`,
        errorCode: SANDBOX_CODES.ENGINE_CRASHED,
        logs: [],
      });
      expect(await gone(pid)).toBe(true);
      expect(outcome(await isolate.execute("2 + 3"))).toStrictEqual({ success: true, result: 5, logs: [] });
      expect(helperPid(isolate)).not.toBe(pid);
    },
  );

  it("destroy() ends running executions, kills the helper and waits for it; idempotent", async () => {
    const isolate = engine({ timeout: 20_000 });
    expect((await isolate.execute("1")).success).toBe(true);
    const pid = helperPid(isolate);
    const running = isolate.execute("for (;;) {}");
    await sleep(100);
    const first = isolate.destroy();
    expect(isolate.destroy()).toBe(first);
    await first;
    expect(isAlive(pid)).toBe(false);
    expect(isolate.helperPid).toBeUndefined();
    expect(outcome(await running)).toStrictEqual({
      success: false,
      error: "IsolateEngine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED)",
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      logs: [],
    });
    expect(outcome(await isolate.execute("1"))).toStrictEqual({
      success: false,
      error: "IsolateEngine was destroyed; create a new IsolateEngine to run code (SANDBOX_ENGINE_DISPOSED)",
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      logs: [],
    });
    expect(isolate.getHeapStatistics()).toBeNull();
  });

  it.skipIf(process.platform !== "linux")(
    "gives the helper an explicit environment: none of the application's variables but time zone, locale and glibc's arena count",
    async () => {
      const key = "SUAVEPLAN_TEST_SECRET";
      process.env[key] = "hunter2";
      try {
        const isolate = engine();
        expect((await isolate.execute("1")).success).toBe(true);
        const environ = readFileSync(`/proc/${helperPid(isolate)}/environ`, "utf8");
        const names = environ
          .split("\0")
          .filter(Boolean)
          .map((entry) => entry.slice(0, entry.indexOf("=")));
        // NODE_CHANNEL_* is Node's own IPC set-up.
        expect(
          names.filter(
            (name) =>
              !/^(TZ|LANG|LC_ALL|MALLOC_ARENA_MAX|NODE_CHANNEL_FD|NODE_CHANNEL_SERIALIZATION_MODE)$/.test(
                name,
              ),
          ),
        ).toEqual([]);
        expect(names).not.toContain(key);
      } finally {
        delete process.env[key];
      }
      expect(
        helperEnv({ TZ: "Europe/Oslo", LANG: "C.UTF-8", PATH: "/bin", AWS_SECRET_ACCESS_KEY: "x" }),
      ).toEqual({
        MALLOC_ARENA_MAX: "2",
        TZ: "Europe/Oslo",
        LANG: "C.UTF-8",
      });
      expect(helperEnv({ MALLOC_ARENA_MAX: "4" })).toEqual({ MALLOC_ARENA_MAX: "4" });
    },
  );

  it("keeps host paths and the helper's frames out of what the guest sees", async () => {
    const isolate = engine();
    const result = await isolate.execute(
      "let caught;\ntry { await tools.fail(1); } catch (e) { caught = String(e.stack ?? e); }\nconst own = new Error('mine').stack;\n[caught, own]",
      {},
      {
        hostCalls: {
          names: ["fail"],
          call: async () => {
            throw new Error("no route");
          },
        },
      },
    );
    expect(outcome(result)).toStrictEqual({
      success: true,
      result: ["Error: no route", "Error: mine\n    at sandbox.js:3:13"],
      logs: [],
    });
    expect(outcome(await isolate.execute("throw new RangeError('too big')"))).toStrictEqual({
      success: false,
      error: "RangeError: too big (line 1, column 7) (SANDBOX_GUEST_ERROR)",
      errorCode: SANDBOX_CODES.GUEST_ERROR,
      logs: [],
      guestError: {
        name: "RangeError",
        message: "too big",
        stack: "RangeError: too big\n    at sandbox.js:1:7",
        line: 1,
        column: 7,
      },
    });
  });

  it("getHeapStatistics() says it is in-process only", () => {
    expect(() => engine().getHeapStatistics()).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.ENGINE_UNAVAILABLE,
        message:
          'IsolateEngine.getHeapStatistics() reads isolates in this process, and this engine runs them in helper processes; read each result\'s usage.heapBytes instead, or run the isolates in-process (pass { process: "in-process" } and start Node with --no-node-snapshot) (SANDBOX_ENGINE_UNAVAILABLE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_ENGINE_UNAVAILABLE.md',
      }),
    );
  });

  it("refuses configurations that cannot work at construction, naming the fix", () => {
    expect(() => new IsolateEngine({ process: "helper", factory: createIsolatedVmFactory() })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message:
          'Invalid IsolateEngine options: a factory cannot be used with process: "helper" (the helper process creates its isolates with isolated-vm itself); drop factory, or use process: "in-process" (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
      }),
    );
    expect(() => new IsolateEngine({ process: "elsewhere" as "helper" })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message:
          'Invalid IsolateEngine option process: expected "auto", "in-process" or "helper" (got "elsewhere") (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md',
      }),
    );
  });
});
