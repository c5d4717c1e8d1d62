import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./sandbox.js";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const opened: Sandbox[] = [];
function sandboxOf(config: Parameters<typeof createSandbox>[0] = {}): Sandbox {
  const sandbox = createSandbox(config);
  opened.push(sandbox);
  return sandbox;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.destroy()));
});

describe("createSandbox (spec: public facade composes every subsystem)", () => {
  it("executes a simple expression", async () => {
    const result = await sandboxOf().execute("2 + 3");
    expect(result.success).toBe(true);
    expect(result.result).toBe(5);
    expect(result.duration).toBeGreaterThanOrEqual(0);
    expect(Array.isArray(result.logs)).toBe(true);
  });

  it("executeFunction multiplies arguments", async () => {
    const result = await sandboxOf().executeFunction((a: number, b: number) => a * b, [6, 7]);
    expect(result).toMatchObject({ success: true, result: 42 });
  });

  it("executeFunction accepts method shorthand and async functions", async () => {
    const helpers = {
      twice(n: number) {
        return n * 2;
      },
    };
    const sandbox = sandboxOf();
    expect((await sandbox.executeFunction(helpers.twice, [21])).result).toBe(42);
    expect((await sandbox.executeFunction(async (s: string) => s.toUpperCase(), ["ok"])).result).toBe("OK");
  });

  it("executeFunction refuses native and bound functions and non-JSON args", async () => {
    const sandbox = sandboxOf();
    expect(() => sandbox.executeFunction(Math.max, [1, 2])).toThrowError(/native and bound functions/);
    const bound = ((a: number) => a).bind(null);
    expect(() => sandbox.executeFunction(bound, [1])).toThrowError(SandboxError);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => sandbox.executeFunction((x: unknown) => x, [cyclic])).toThrowError(
      /args: must be JSON-safe/,
    );
  });

  it("transformer blocks process.exit", async () => {
    const result = await sandboxOf().execute("process.exit(1)");
    expect(result.success).toBe(false);
    expect(result.errorCode).toBe(SANDBOX_CODES.CODE_BLOCKED);
    expect(result.error).toContain("block-process");
  });

  it("rejects invalid config", () => {
    expect.assertions(3);
    try {
      createSandbox({ timeout: -1 });
    } catch (error) {
      expect(error).toBeInstanceOf(SandboxError);
      expect((error as SandboxError).code).toBe(SANDBOX_CODES.INVALID_CONFIG);
      expect((error as SandboxError).message).toContain("config.timeout");
    }
  });

  it("names the offending field for bad engines, options, code and context (bad input resolves, never rejects)", async () => {
    expect(() => createSandbox({ engine: "docker" })).toThrowError(
      'Invalid sandbox config: config.engine: no engine named "docker"; registered: vm, worker, spawn, isolate, quickjs (use registerEngine to add one) (SANDBOX_INVALID_CONFIG)',
    );
    const sandbox = sandboxOf();
    const outcome = (r: SandboxResult) => ({ success: r.success, errorCode: r.errorCode, error: r.error });
    expect(outcome(await sandbox.execute("1", {}, { timeout: 0 }))).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      error:
        "Invalid execution options: options.timeout: Too small: expected number to be >0 (got 0) (SANDBOX_INVALID_OPTIONS)",
    });
    // @ts-expect-error — code must be a string
    expect(outcome(await sandbox.execute(42))).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      error: "code: must be a string (got number) (SANDBOX_INVALID_OPTIONS)",
    });
    // @ts-expect-error — context must be a plain object
    expect(outcome(await sandbox.execute("1", [1, 2]))).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      error: "context: must be a plain object of values to copy in as globals (SANDBOX_INVALID_OPTIONS)",
    });
  });

  it("refuses oversize code with CODE_TOO_LONG before any engine work", async () => {
    const sandbox = sandboxOf({ maxCodeLength: 100 });
    const result = await sandbox.execute(`/*${"x".repeat(200)}*/ 1`);
    expect(result).toMatchObject({ success: false, errorCode: SANDBOX_CODES.CODE_TOO_LONG });
    expect(result.error).toContain("maxCodeLength 100");
  });

  it("reports a snippet that does not parse with the syntax error's message and line", async () => {
    const result = await sandboxOf().execute("const a = 1;\nconst = 2;");
    expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.SYNTAX_ERROR,
      error: "SyntaxError: Unexpected token '=' (line 2, column 7) (SANDBOX_SYNTAX_ERROR)",
    });
  });

  it("rate limits as success:false RATE_LIMITED", async () => {
    const sandbox = sandboxOf({ maxExecutionsPerWindow: 2, rateLimitWindow: 60_000 });
    expect((await sandbox.execute("1")).success).toBe(true);
    expect((await sandbox.execute("2")).success).toBe(true);
    const third = await sandbox.execute("3");
    expect(third).toMatchObject({ success: false, errorCode: SANDBOX_CODES.RATE_LIMITED });
  });

  it("registers modules through the ModuleResolver and refuses denylisted names", async () => {
    const sandbox = sandboxOf();
    sandbox.registerModule({ name: "pricing", exports: { vat: 0.2 } });
    expect((await sandbox.execute("pricing.vat * 100")).result).toBe(20);
    expect(() => sandbox.registerModule({ name: "fs", exports: {} })).toThrowError(
      expect.objectContaining({ code: SANDBOX_CODES.BLOCKED_MODULE }),
    );
    expect(sandbox.unregisterModule("pricing")).toBe(true);
    const after = await sandbox.execute("typeof pricing");
    expect(after.result).toBe("undefined");
  });

  it("keeps an audit log and statistics, and reset clears them", async () => {
    const sandbox = sandboxOf();
    await sandbox.execute("1 + 1");
    await sandbox.execute("throw new Error('boom')");
    const log = sandbox.getAuditLog();
    expect(log.map((e) => e.success)).toEqual([true, false]);
    expect(log[1]?.error).toContain("boom");
    expect(sandbox.getStatistics()).toMatchObject({
      totalRuns: 2,
      successCount: 1,
      failureCount: 1,
      engine: "vm",
    });
    sandbox.reset();
    expect(sandbox.getAuditLog()).toEqual([]);
    expect(sandbox.getStatistics().totalRuns).toBe(0);
  });

  it("truncates a long string result at maxOutputSize bytes", async () => {
    const result = await sandboxOf({ maxOutputSize: 64 }).execute("'é'.repeat(100)");
    expect(result.result).toBe(`${"é".repeat(32)}[output truncated at 64 bytes]`);
  });

  it("runs through a SandboxPool when config.pool is set", async () => {
    const sandbox = sandboxOf({ pool: { minSize: 1, maxSize: 2, maxExecutionsPerEngine: 2 } });
    const results = await Promise.all([1, 2, 3, 4].map((n) => sandbox.execute(`${n} * 10`)));
    const values = results.map((r) => (r.success ? r.result : r.errorCode));
    for (const value of values) expect([10, 20, 30, 40, SANDBOX_CODES.POOL_EXHAUSTED]).toContain(value);
    expect(values).toContain(10);
    expect((await sandbox.execute("'after'")).result).toBe("after");
  });

  it("destroy is idempotent and later executions report ENGINE_DISPOSED", async () => {
    const sandbox = createSandbox();
    await sandbox.execute("1");
    await sandbox.destroy();
    await sandbox.destroy();
    const result = await sandbox.execute("1");
    expect(result).toMatchObject({ success: false, errorCode: SANDBOX_CODES.ENGINE_DISPOSED });
    expect(() => sandbox.registerModule({ name: "late", exports: 1 })).toThrowError(
      expect.objectContaining({ code: SANDBOX_CODES.ENGINE_DISPOSED }),
    );
  });

  it.each(ENGINE_NAMES)(
    "executeStream delivers a log line before a 1-second sleep ends (%s)",
    async (engine) => {
      const sandbox = sandboxOf({ engine, timeout: 10_000 });
      const code =
        "console.log('first'); await new Promise((r) => setTimeout(r, 1000)); console.log('second'); 7";
      const started = performance.now();
      const seen: Array<{ type: string; at: number }> = [];
      let result: unknown;
      for await (const chunk of sandbox.executeStream(code)) {
        seen.push({
          type: chunk.type === "log" ? `log:${chunk.data}` : chunk.type,
          at: performance.now() - started,
        });
        if (chunk.type === "complete") result = chunk.data.result;
      }
      expect(seen.map((s) => s.type)).toEqual(["log:first", "log:second", "complete"]);
      expect(result).toBe(7);
      const first = seen[0]?.at ?? Number.POSITIVE_INFINITY;
      const complete = seen[2]?.at ?? 0;
      // The first line arrived while the guest was still sleeping, not with the result.
      expect(complete - first).toBeGreaterThanOrEqual(900);
    },
  );

  it("exports every documented subpath", async () => {
    const pkg = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as {
      exports: Record<string, string | { default: string }>;
    };
    const documented = [
      ".",
      "./types",
      "./error-codes",
      "./schemas",
      "./telemetry",
      "./audit-logger",
      "./resource-limiter",
      "./module-resolver",
      "./code-transformer",
      "./vm-engine",
      "./worker-engine",
      "./spawn-engine",
      "./runner",
      "./isolate-engine",
      "./quickjs-engine",
      "./pool",
      "./result-streamer",
      "./sandbox",
      "./ai",
    ];
    const keys = Object.keys(pkg.exports).filter((k) => k !== "./package.json");
    expect(keys.sort()).toEqual([...documented].sort());
    expect(pkg.exports["./package.json"]).toBe("./package.json");
    const expectedNames: Record<string, string> = {
      ".": "createSandbox",
      "./types": "ENGINE_NAMES",
      "./error-codes": "SANDBOX_CODES",
      "./schemas": "SandboxConfigPartialSchema",
      "./telemetry": "recordExecution",
      "./audit-logger": "AuditLogger",
      "./resource-limiter": "ResourceLimiter",
      "./module-resolver": "ModuleResolver",
      "./code-transformer": "CodeTransformer",
      "./vm-engine": "VmEngine",
      "./worker-engine": "WorkerEngine",
      "./spawn-engine": "SpawnEngine",
      "./runner": "parseRunnerInput",
      "./isolate-engine": "IsolateEngine",
      "./quickjs-engine": "QuickJsEngine",
      "./pool": "SandboxPool",
      "./result-streamer": "ResultStreamer",
      "./sandbox": "createSandbox",
      "./ai": "createCodeTool",
    };
    for (const key of documented) {
      const entry = pkg.exports[key];
      const target = typeof entry === "string" ? entry : entry?.default;
      expect(target, key).toMatch(/^\.\/dist\/.+\.js$/);
      const mod = (await import(pathToFileURL(join(packageDir, target ?? "")).href)) as Record<
        string,
        unknown
      >;
      expect(mod[expectedNames[key] ?? ""], `${key} exports ${expectedNames[key]}`).toBeDefined();
    }
  });
});
