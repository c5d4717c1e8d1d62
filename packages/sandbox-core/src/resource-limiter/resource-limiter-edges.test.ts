import { describe, expect, it } from "vitest";
import { SANDBOX_CODES, SandboxError } from "../error-codes/index.js";
import { ResourceLimiter, truncateOutput } from "./index.js";

describe("ResourceLimiter at its edges", () => {
  it("frees a slot exactly rateLimitWindow ms after it was recorded, not one ms earlier", () => {
    let now = 1_000;
    const limiter = new ResourceLimiter({
      maxExecutionsPerWindow: 2,
      rateLimitWindow: 100,
      clock: () => now,
    });
    limiter.recordExecution();
    now = 1_050;
    limiter.recordExecution();
    now = 1_099;
    expect(() => limiter.checkRateLimit()).toThrowError(
      expect.objectContaining({ details: expect.objectContaining({ retryAfterMs: 1 }) }),
    );
    now = 1_100;
    expect(() => limiter.checkRateLimit()).not.toThrow();
    expect(limiter.getWindowExecutions()).toBe(1);
  });

  it("never splits an emoji, a CJK character or a flag's code points at any byte limit, and appends the exact sentinel", () => {
    const text = "a😀b中文🇫🇷";
    const whole = new TextEncoder().encode(text).byteLength;
    for (let limit = 1; limit < whole; limit++) {
      const out = truncateOutput(text, limit);
      const sentinel = `[output truncated at ${limit} bytes]`;
      expect(out.endsWith(sentinel)).toBe(true);
      const kept = out.slice(0, -sentinel.length);
      expect(text.startsWith(kept)).toBe(true);
      expect(new TextEncoder().encode(kept).byteLength).toBeLessThanOrEqual(limit);
      expect(kept).not.toMatch(/[\uD800-\uDBFF]$/);
      expect(kept).not.toContain("\uFFFD");
    }
    expect(truncateOutput(text, whole)).toBe(text);
  });

  it("refuses a clock that is not a function with INVALID_CONFIG naming it", () => {
    let caught: unknown;
    try {
      // @ts-expect-error — clock must be a function
      new ResourceLimiter({ clock: 5 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SandboxError);
    expect((caught as SandboxError).code).toBe(SANDBOX_CODES.INVALID_CONFIG);
    expect((caught as SandboxError).message).toContain("clock");
  });
});
