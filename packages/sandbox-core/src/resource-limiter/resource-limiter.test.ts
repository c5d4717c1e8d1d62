import { describe, expect, it } from "vitest";
import { isSandboxError, type SandboxError } from "../error-codes/index.js";
import { SANDBOX_DEFAULTS } from "../schemas/index.js";
import { ResourceLimiter, truncationSentinel } from "./index.js";

function manualClock(start = 1_000_000) {
  let now = start;
  return {
    clock: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

function thrown(run: () => void): SandboxError {
  try {
    run();
  } catch (error) {
    if (isSandboxError(error)) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

describe("ResourceLimiter", () => {
  it("sliding window resets after expiry", () => {
    const time = manualClock();
    const limiter = new ResourceLimiter({
      maxExecutionsPerWindow: 2,
      rateLimitWindow: 1_000,
      clock: time.clock,
    });

    limiter.checkRateLimit();
    limiter.recordExecution();
    time.advance(400);
    limiter.checkRateLimit();
    limiter.recordExecution();
    time.advance(100);

    const error = thrown(() => limiter.checkRateLimit());
    expect(error.code).toBe("SANDBOX_RATE_LIMITED");
    expect(error.message).toBe(
      "Rate limit reached: 2 of 2 executions allowed per 1000 ms window are used; the next slot frees in 500 ms. " +
        "Retry later or raise maxExecutionsPerWindow (SANDBOX_RATE_LIMITED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_RATE_LIMITED.md",
    );
    expect(error.details).toEqual({ limit: 2, windowMs: 1_000, inWindow: 2, retryAfterMs: 500 });

    time.advance(499); // 999 ms after the first execution: still inside the window
    expect(() => limiter.checkRateLimit()).toThrowError(/SANDBOX_RATE_LIMITED/);
    time.advance(1); // exactly one window later the first execution leaves it
    expect(() => limiter.checkRateLimit()).not.toThrow();
    expect(limiter.getWindowExecutions()).toBe(1);
    limiter.recordExecution();
    expect(() => limiter.checkRateLimit()).toThrowError(/the next slot frees in 400 ms/);

    time.advance(1_000);
    expect(limiter.getWindowExecutions()).toBe(0);
    expect(limiter.getTotalExecutions()).toBe(3);
  });

  it("truncates oversize output", () => {
    const limiter = new ResourceLimiter({ maxOutputSize: 10 });
    expect(limiter.truncateOutput("0123456789abcdef")).toBe(`0123456789${truncationSentinel(10)}`);
    expect(limiter.truncateOutput("0123456789abcdef")).toBe("0123456789[output truncated at 10 bytes]");
    expect(limiter.truncateOutput("0123456789")).toBe("0123456789");
    // Bytes, not characters: five two-byte characters fill the budget.
    expect(limiter.truncateOutput("ééééééé")).toBe("ééééé[output truncated at 10 bytes]");
  });

  it("counts every recorded execution even when no limit is set, and reset forgets them", () => {
    const time = manualClock();
    const limiter = new ResourceLimiter({ rateLimitWindow: 100, clock: time.clock });
    for (let i = 0; i < 50; i++) {
      limiter.checkRateLimit();
      limiter.recordExecution();
      time.advance(10);
    }
    expect(limiter.getTotalExecutions()).toBe(50);
    expect(limiter.getWindowExecutions()).toBe(9); // recorded at +410 … +490; now is +500
    limiter.reset();
    expect(limiter.getTotalExecutions()).toBe(0);
    expect(limiter.getWindowExecutions()).toBe(0);
  });

  it("reports when a slot frees even after executions were recorded past the limit", () => {
    const time = manualClock();
    const limiter = new ResourceLimiter({
      maxExecutionsPerWindow: 2,
      rateLimitWindow: 1_000,
      clock: time.clock,
    });
    for (let i = 0; i < 4; i++) {
      limiter.recordExecution(); // recorded at +0, +100, +200, +300
      time.advance(100);
    }
    // 4 in the window, limit 2: the third-newest (+200) must leave; it does at +1200.
    expect(thrown(() => limiter.checkRateLimit()).details).toEqual({
      limit: 2,
      windowMs: 1_000,
      inWindow: 4,
      retryAfterMs: 800,
    });
  });

  it("defaults to the SandboxConfig defaults and validates its options", () => {
    const limiter = new ResourceLimiter();
    expect({
      max: limiter.maxExecutionsPerWindow,
      window: limiter.rateLimitWindow,
      output: limiter.maxOutputSize,
    }).toEqual({
      max: undefined,
      window: SANDBOX_DEFAULTS.rateLimitWindow,
      output: SANDBOX_DEFAULTS.maxOutputSize,
    });
    const error = thrown(() => new ResourceLimiter({ rateLimitWindow: 0 }));
    expect(error.code).toBe("SANDBOX_INVALID_CONFIG");
    expect(error.message).toBe(
      "ResourceLimiter: rateLimitWindow must be a positive integer (got 0) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
    expect(() => new ResourceLimiter({ maxExecutionsPerWindow: 1.5 })).toThrowError(
      "ResourceLimiter: maxExecutionsPerWindow must be a positive integer (got 1.5) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
  });
});
