import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isSandboxError } from "../error-codes/index.js";
import { truncationSentinel } from "./output-budget.js";
import { ResourceLimiter } from "./resource-limiter.js";

// Property tests: the sliding window against a model (every recorded start time counts until
// `t + window`), output truncation on any text, and option validation on any value.

type Op = { kind: "advance"; ms: number } | { kind: "run" } | { kind: "reset" };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 120 }).map((ms) => ({ kind: "advance" as const, ms })) },
  { weight: 4, arbitrary: fc.constant({ kind: "run" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
);

describe("ResourceLimiter (properties)", () => {
  it("admits a run exactly when fewer than the limit started within the window, and says when the next slot frees", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 300 }),
        fc.array(op, { maxLength: 60 }),
        (limit, windowMs, ops) => {
          let now = 1_000_000;
          const limiter = new ResourceLimiter({
            maxExecutionsPerWindow: limit,
            rateLimitWindow: windowMs,
            clock: () => now,
          });
          let starts: number[] = [];
          let total = 0;
          for (const step of ops) {
            if (step.kind === "advance") now += step.ms;
            else if (step.kind === "reset") {
              limiter.reset();
              starts = [];
              total = 0;
            } else {
              const inWindow = starts.filter((t) => t > now - windowMs);
              let refused: unknown;
              try {
                limiter.checkRateLimit();
              } catch (error) {
                refused = error;
              }
              if (inWindow.length < limit) {
                expect(refused).toBeUndefined();
                limiter.recordExecution();
                starts.push(now);
                total++;
              } else {
                const freesAt = (inWindow[inWindow.length - limit] as number) + windowMs;
                expect(isSandboxError(refused) && refused.code).toBe("SANDBOX_RATE_LIMITED");
                expect((refused as { details?: { retryAfterMs?: number } }).details?.retryAfterMs).toBe(
                  freesAt - now,
                );
              }
            }
            expect(limiter.getWindowExecutions()).toBe(starts.filter((t) => t > now - windowMs).length);
            expect(limiter.getTotalExecutions()).toBe(total);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("truncateOutput: unchanged when it fits; otherwise a prefix within the byte budget, cut on a character boundary, plus the sentinel", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 60 }),
        fc.integer({ min: 1, max: 80 }),
        (text, max) => {
          const out = new ResourceLimiter({ maxOutputSize: max }).truncateOutput(text);
          if (Buffer.byteLength(text) <= max) {
            expect(out).toBe(text);
            return;
          }
          const sentinel = truncationSentinel(max);
          expect(out.endsWith(sentinel)).toBe(true);
          const kept = out.slice(0, out.length - sentinel.length);
          expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(max);
          expect(text.startsWith(kept)).toBe(true);
          // No lone surrogate: the kept part survives a UTF-8 round trip unchanged.
          expect(Buffer.from(kept, "utf8").toString("utf8")).toBe(kept);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("refuses a value that cannot become a string (fast-check's counterexample) with SANDBOX_INVALID_CONFIG", () => {
    for (const value of [{ toString: {} }, Object.create(null)]) {
      expect(() => new ResourceLimiter({ maxExecutionsPerWindow: value } as never)).toThrow(
        "ResourceLimiter: maxExecutionsPerWindow must be a positive integer (got object)",
      );
    }
  });

  it("bad options are refused with SANDBOX_INVALID_CONFIG, never another exception", () => {
    fc.assert(
      fc.property(
        fc.anything(),
        fc.anything(),
        fc.anything(),
        fc.anything(),
        (max, windowMs, output, clock) => {
          try {
            new ResourceLimiter({
              maxExecutionsPerWindow: max,
              rateLimitWindow: windowMs,
              maxOutputSize: output,
              clock,
            } as never);
          } catch (error) {
            expect(isSandboxError(error) && error.code).toBe("SANDBOX_INVALID_CONFIG");
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
