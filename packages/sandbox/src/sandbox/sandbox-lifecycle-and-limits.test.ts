import { execFileSync } from "node:child_process";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { SandboxPool } from "@suaveplan/sandbox-core/pool";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { SpawnEngine } from "@suaveplan/sandbox-spawn";
import { VmEngine } from "@suaveplan/sandbox-vm";
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./sandbox.js";

/** `[1, <hole>, 3]`, built without a sparse literal. */
function holey(): unknown[] {
  const array: unknown[] = [1];
  array[2] = 3;
  return array;
}

// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;
const opened: Array<{ destroy(): Promise<void> }> = [];
function sandboxOf(config: Parameters<typeof createSandbox>[0] = {}): Sandbox {
  const sandbox = createSandbox(config);
  opened.push(sandbox);
  return sandbox;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.destroy()));
  expect(childPids()).toEqual([]);
});

/** Live child processes of this test process (spawn engine children). */
function childPids(): number[] {
  const out = execFileSync("ps", ["-o", "pid=", "--ppid", String(process.pid)], { encoding: "utf8" });
  const ps = new Set<number>();
  return out
    .split("\n")
    .map((line) => Number(line.trim()))
    .filter((pid) => pid > 0 && !ps.has(pid))
    .filter((pid) => {
      try {
        // `ps` itself is a child while it runs; it is gone by now.
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
}

/** Resources a finished sandbox must not leave behind (timers, workers, child pipes). */
function leakable(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((r) => r === "Timeout" || r === "Immediate" || r === "ChildProcess" || r === "MessagePort")
    .sort();
}

/** Every kind of resource in `after` was already there as often in `before`. */
function expectNothingNew(before: string[], after: string[]): void {
  const left = [...before];
  const extra = after.filter((kind) => {
    const index = left.indexOf(kind);
    if (index === -1) return true;
    left.splice(index, 1);
    return false;
  });
  expect(extra).toEqual([]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** `promise`'s value, or "timed out" after `ms`; clears its own timer so it leaves nothing behind. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | "timed out"> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<"timed out">((resolve) => {
        timer = setTimeout(() => resolve("timed out"), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function thrown(attempt: () => unknown): SandboxError {
  try {
    attempt();
  } catch (error) {
    if (error instanceof SandboxError) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

const SLOW = "console.log('first'); await new Promise((r) => setTimeout(r, 20000)); console.log('never'); 1";

describe("executeStream abandoned early", () => {
  it.each(ENGINES)(
    "break after the first log: destroy() still resolves promptly and releases everything (%s)",
    async (engine) => {
      const before = leakable();
      const sandbox = createSandbox({ engine, timeout: 30_000 });
      const seen: string[] = [];
      for await (const chunk of sandbox.executeStream(SLOW)) {
        seen.push(chunk.type);
        if (chunk.type === "log") break;
      }
      expect(seen).toEqual(["log"]);
      const started = performance.now();
      expect(await within(sandbox.destroy(), 5_000)).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(5_000);
      await sleep(50);
      expect(childPids()).toEqual([]);
      expectNothingNew(before, leakable());
    },
  );

  it("return() while a next() is pending ends that next() at once instead of when the guest finishes", async () => {
    const sandbox = sandboxOf({ engine: "worker", timeout: 30_000 });
    const iterator = sandbox
      .executeStream("await new Promise((r) => setTimeout(r, 20000)); 1")
      [Symbol.asyncIterator]();
    const pending = iterator.next();
    await sleep(100);
    await iterator.return?.();
    expect(await within(pending, 1_000)).toEqual({ value: undefined, done: true });
  });

  it("concurrent next() calls each settle (none is lost)", async () => {
    const sandbox = sandboxOf();
    const iterator = sandbox.executeStream("console.log('a'); 2")[Symbol.asyncIterator]();
    const results = await within(Promise.all([iterator.next(), iterator.next(), iterator.next()]), 2_000);
    expect(results).not.toBe("timed out");
    const [a, b, c] = results as IteratorResult<{ type: string }>[];
    expect([a?.value?.type, b?.value?.type, c?.done]).toEqual(["log", "complete", true]);
  });

  it("never iterated: nothing runs at all", async () => {
    const sandbox = sandboxOf();
    sandbox.executeStream("1");
    await sleep(20);
    expect(sandbox.getAuditLog()).toEqual([]);
    expect(sandbox.getStatistics().totalExecutions).toBe(0);
  });
});

describe("destroy()", () => {
  it.each(ENGINES)("a second, concurrent destroy() waits for the first to finish (%s)", async (engine) => {
    const sandbox = createSandbox({ engine, timeout: 30_000 });
    const running = sandbox.execute(SLOW);
    await sleep(300);
    let firstDone = false;
    const first = sandbox.destroy().then(() => {
      firstDone = true;
    });
    await sandbox.destroy();
    expect(firstDone).toBe(true);
    expect(childPids()).toEqual([]);
    expect(await running).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_DISPOSED });
    await first;
  });

  it.each(ENGINES)("settles running and queued pool executions with ENGINE_DISPOSED (%s)", async (engine) => {
    const sandbox = createSandbox({
      engine,
      timeout: 30_000,
      pool: { maxSize: 1, maxQueue: 4, acquireTimeoutMs: 30_000 },
    });
    const calls = Array.from({ length: 5 }, () => sandbox.execute(SLOW));
    await sleep(300);
    await sandbox.destroy();
    const results = await within(Promise.all(calls), 5_000);
    expect(results).not.toBe("timed out");
    for (const result of results as SandboxResult[]) {
      expect(result).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_DISPOSED });
    }
    expect(childPids()).toEqual([]);
  });

  it("every entry point after destroy answers ENGINE_DISPOSED", async () => {
    const sandbox = createSandbox({ engine: "spawn" });
    await sandbox.destroy();
    expect(await sandbox.execute("1")).toMatchObject({ errorCode: SANDBOX_CODES.ENGINE_DISPOSED });
    expect(await sandbox.executeFunction(() => 1)).toMatchObject({
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
    });
    const chunks = [];
    for await (const chunk of sandbox.executeStream("1")) chunks.push(chunk);
    expect(chunks).toMatchObject([{ type: "complete", data: { errorCode: SANDBOX_CODES.ENGINE_DISPOSED } }]);
    await expect(sandbox.getCapabilities()).rejects.toMatchObject({ code: SANDBOX_CODES.ENGINE_DISPOSED });
    expect(() => sandbox.reset()).toThrowError(
      expect.objectContaining({ code: SANDBOX_CODES.ENGINE_DISPOSED }),
    );
  });
});

describe("reset() during a running execution", () => {
  it("lets the running execution finish with the modules it started with and audits it", async () => {
    const sandbox = sandboxOf({ engine: "isolate", timeout: 10_000 });
    sandbox.registerModule({ name: "prices", exports: { vat: 0.2 } });
    const running = sandbox.execute("await new Promise((r) => setTimeout(r, 300)); prices.vat");
    await sleep(50);
    sandbox.reset();
    expect(await running).toMatchObject({ success: true, result: 0.2 });
    expect(sandbox.getAuditLog()).toHaveLength(1);
    expect((await sandbox.execute("typeof prices")).result).toBe("undefined");
  });
});

describe("a pool of real engines under 20 concurrent callers", () => {
  it("maxSize 1 with a bounded queue: nobody hangs, the overflow is POOL_EXHAUSTED, engines recycle", async () => {
    const pool = new SandboxPool({
      factory: () => new SpawnEngine({ timeout: 5_000 }),
      maxSize: 1,
      maxQueue: 3,
      acquireTimeoutMs: 2_000,
      maxExecutionsPerEngine: 2,
      cleanupIntervalMs: 0,
    });
    opened.push(pool);
    const results = await within(
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          pool.execute(`await new Promise((r) => setTimeout(r, 20)); ${i}`),
        ),
      ),
      15_000,
    );
    expect(results).not.toBe("timed out");
    const list = results as SandboxResult[];
    const ok = list.filter((r) => r.success);
    const exhausted = list.filter((r) => r.errorCode === SANDBOX_CODES.POOL_EXHAUSTED);
    expect(ok.length + exhausted.length).toBe(20);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(ok.length).toBeLessThanOrEqual(4);
    for (const r of exhausted) expect(r.error).toMatch(/maxQueue 3|acquireTimeoutMs/);
    const stats = pool.stats();
    expect(stats.totalRecycled).toBe(Math.floor(ok.length / 2));
    expect(stats.queued).toBe(0);
    await pool.destroy();
    expect(childPids()).toEqual([]);
  });

  it("reclaims idle engines with the injectable clock and survives a factory that starts throwing", async () => {
    let now = 1_000;
    let calls = 0;
    const pool = new SandboxPool({
      factory: () => {
        calls++;
        if (calls > 2) throw new Error("out of engines");
        return new VmEngine({ timeout: 1_000 });
      },
      minSize: 0,
      maxSize: 2,
      idleTimeoutMs: 500,
      clock: () => now,
      cleanupIntervalMs: 0,
    });
    opened.push(pool);
    await Promise.all([pool.execute("1"), pool.execute("2")]);
    expect(pool.size()).toBe(2);
    now += 500;
    expect(await pool.cleanup()).toBe(0);
    now += 1;
    expect(await pool.cleanup()).toBe(2);
    const failed = await pool.execute("3");
    expect(failed).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_FAILED });
    expect(failed.error).toContain("out of engines");
    await pool.destroy();
  });
});

describe("output limits", () => {
  it("the per-execution maxOutputSize also cuts a string result", async () => {
    const result = await sandboxOf({ maxOutputSize: 1_000 }).execute(
      "'😀'.repeat(10)",
      {},
      { maxOutputSize: 10 },
    );
    expect(result.result).toBe("😀😀[output truncated at 10 bytes]");
  });

  it("a guest error's text is cut at maxOutputSize bytes, in the result and in the audit log", async () => {
    const sandbox = sandboxOf({ maxOutputSize: 64 });
    const result = await sandbox.execute("throw new Error('中'.repeat(100000))");
    expect(result.success).toBe(false);
    expect(result.error?.endsWith("[output truncated at 64 bytes]")).toBe(true);
    expect(result.error).not.toContain("\uFFFD");
    expect(sandbox.getAuditLog()[0]?.error).toBe(result.error);
  });

  it("the audit log stays at 10 000 entries under a flood", async () => {
    const sandbox = sandboxOf({ maxCodeLength: 1 });
    for (let i = 0; i < 10_050; i++) await sandbox.execute("22");
    const log = sandbox.getAuditLog();
    expect(log).toHaveLength(10_000);
    expect(log.every((e) => e.errorCode === SANDBOX_CODES.CODE_TOO_LONG)).toBe(true);
  });
});

describe("executeFunction with awkward functions and arguments", () => {
  it("runs an async arrow and ignores an overridden toString", async () => {
    const sandbox = sandboxOf();
    expect((await sandbox.executeFunction(async (n: number) => n + 1, [1])).result).toBe(2);
    const fn = (n: number) => n * 2;
    fn.toString = () => "() => 'pwned'";
    expect((await sandbox.executeFunction(fn, [21])).result).toBe(42);
  });

  it("refuses classes and accessors up front, naming fn and the reason", () => {
    const sandbox = sandboxOf();
    class Robot {}
    expect(thrown(() => sandbox.executeFunction(Robot as never, [])).message).toMatch(/fn: .*class/);
    const getter = Object.getOwnPropertyDescriptor(
      {
        get size() {
          return 1;
        },
      },
      "size",
    )?.get as () => number;
    const error = thrown(() => sandbox.executeFunction(getter, []));
    expect(error.code).toBe(SANDBOX_CODES.INVALID_OPTIONS);
    expect(error.message).toMatch(/fn: .*getter or setter/);
  });

  it.each([
    ["undefined as an argument", [undefined], /args\[0\].*undefined/],
    ["undefined inside an array", [[1, undefined]], /args\[0\]\[1\].*undefined/],
    ["a hole in an array", [holey()], /args\[0\]\[1\].*hole/],
    ["NaN", [{ n: Number.NaN }], /args\[0\]\.n.*NaN/],
    ["Infinity", [Number.POSITIVE_INFINITY], /args\[0\].*Infinity/],
    ["a BigInt", [{ big: 1n }], /args\[0\]\.big.*bigint/],
    ["a Date", [new Date(0)], /args\[0\].*Date/],
    ["a Map", [new Map()], /args\[0\].*Map/],
    ["a function", [{ f: () => 1 }], /args\[0\]\.f.*function/],
    ["a symbol", [Symbol("s")], /args\[0\].*symbol/],
  ])("refuses %s instead of silently changing it", (_label, args, message) => {
    const sandbox = sandboxOf();
    const error = thrown(() => sandbox.executeFunction((...a: unknown[]) => a, args as unknown[]));
    expect(error.code).toBe(SANDBOX_CODES.INVALID_OPTIONS);
    expect(error.message).toMatch(/args: must be JSON-safe/);
    expect(error.message).toMatch(message);
  });

  it("names the path of a cycle", () => {
    const cyclic: Record<string, unknown> = { inner: {} };
    (cyclic.inner as Record<string, unknown>).back = cyclic;
    const error = thrown(() => sandboxOf().executeFunction((x: unknown) => x, [cyclic]));
    expect(error.message).toMatch(/args\[0\]\.inner\.back.*cycl/);
  });

  it("still accepts plain nested data, null and null-prototype objects", async () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, {
      k: [1, "two", null, { d: true }],
    });
    const result = await sandboxOf().executeFunction((x: unknown) => x, [bare]);
    expect(result).toMatchObject({ success: true, result: { k: [1, "two", null, { d: true }] } });
  });
});

describe("executeFunction with method shorthand keyed by a symbol", () => {
  it("calls the method whatever its key", async () => {
    const helpers = {
      [Symbol.iterator](n: number) {
        return n + 1;
      },
    };
    expect((await sandboxOf().executeFunction(helpers[Symbol.iterator], [41])).result).toBe(42);
  });
});
