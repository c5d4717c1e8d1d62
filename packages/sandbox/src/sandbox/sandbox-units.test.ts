import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./sandbox.js";

const opened: Sandbox[] = [];
function sandboxOf(config: Parameters<typeof createSandbox>[0]): Sandbox {
  const sandbox = createSandbox(config);
  opened.push(sandbox);
  return sandbox;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.destroy()));
});

/** The result without the measured fields. */
function outcome(result: SandboxResult): Partial<SandboxResult> {
  const { duration: _d, memoryUsed: _m, usage: _u, ...rest } = result as SandboxResult & { calls?: unknown };
  return rest;
}

// About 100 MiB of live numbers: over a 64 MiB heap limit, well under 256 MiB.
const HUNDRED_MIB =
  "const a = []; for (let i = 0; i < 100; i++) a.push(new Float64Array(131072).fill(i)); a.length";
const PAGE = "see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md";

describe("durations and sizes as strings with their unit", () => {
  it('createSandbox({ engine: "isolate", memoryLimit: "64MiB", timeout: "1s" }) applies both on the real engine', async () => {
    const sandbox = sandboxOf({
      engine: "isolate",
      memoryLimit: "64MiB",
      timeout: "1s",
      maxOutputSize: "1KiB",
    });
    expect([sandbox.config.memoryLimit, sandbox.config.timeout, sandbox.config.maxOutputSize]).toEqual([
      64 * 1024 * 1024,
      1000,
      1024,
    ]);
    const [loop, big] = [await sandbox.execute("for (;;) {}"), await sandbox.execute(HUNDRED_MIB)];
    expect(outcome(loop)).toEqual({
      success: false,
      errorCode: "SANDBOX_TIMEOUT",
      error:
        "Execution timed out after 1000 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      logs: [],
      calls: [],
    });
    expect(big).toMatchObject({ success: false, errorCode: "SANDBOX_MEMORY_EXCEEDED" });
    // The same code fits under a larger limit given per call, also as a string.
    expect(await sandbox.execute(HUNDRED_MIB, {}, { memoryLimit: "256MiB", timeout: "10s" })).toMatchObject({
      success: true,
      result: 100,
    });
    expect(outcome(await sandbox.execute("for (;;) {}", {}, { timeout: "250ms" }))).toMatchObject({
      errorCode: "SANDBOX_TIMEOUT",
      error:
        "Execution timed out after 250 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
    });
  });

  it("a bad string is SANDBOX_INVALID_CONFIG at createSandbox and SANDBOX_INVALID_OPTIONS per call, naming field and value", async () => {
    expect(() => createSandbox({ engine: "vm", timeout: "30" })).toThrowError(
      expect.objectContaining({
        code: "SANDBOX_INVALID_CONFIG",
        message: `Invalid sandbox config: config.timeout: needs a unit (ms, s, m, h): a string must say which, e.g. "30ms"; a plain number is read as milliseconds (got "30") (SANDBOX_INVALID_CONFIG); ${PAGE}`,
      }),
    );
    const sandbox = sandboxOf({ engine: "vm" });
    expect(outcome(await sandbox.execute("1", {}, { memoryLimit: "64KB" }))).toEqual({
      success: false,
      errorCode: "SANDBOX_INVALID_OPTIONS",
      error:
        'Invalid execution options: options.memoryLimit: has an unknown unit "KB" (did you mean KiB (1024 bytes) or kB (1000 bytes)?); units are B, KiB, MiB, GiB, kB, MB, GB (got "64KB") (SANDBOX_INVALID_OPTIONS)',
      logs: [],
      calls: [],
    });
  });

  it("isolate: memoryLimit 64 (bytes) is refused, not raised to 8 MiB, with the fix in the message", async () => {
    const sandbox = sandboxOf({ engine: "isolate", memoryLimit: 64 });
    expect(outcome(await sandbox.execute("1"))).toEqual({
      success: false,
      errorCode: "SANDBOX_INVALID_CONFIG",
      error:
        'memoryLimit: 64 bytes is below the isolate engine\'s minimum of 8 MiB (8388608 bytes); did you mean "64MiB"? (SANDBOX_INVALID_CONFIG)',
      logs: [],
      calls: [],
    });
  });
});
