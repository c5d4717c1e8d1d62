import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RunnerFailureRule } from "../policy/sandbox-policy-types.js";
import {
  type ConfinedRunClassification,
  type ConfinedRunDialect,
  classifyConfinedRun,
} from "./classify-confined-run.js";

// Property tests: classifyConfinedRun against a plain model of its documented rules, on stderr
// texts and signatures drawn from an alphabet full of line breaks and regular-expression
// metacharacters (ASCII only, so "case-insensitive" means the same to the model and to a RegExp).

const ALPHABET = [..."abcAB xyzXYZ01:./*+?^$|()[]{}\\-", "\n", "\r", "\r\n"];
const text = (maxLength: number) => fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength });
/** Signatures and lines are often built from the same few words, so they do match. */
const word = fc.constantFrom("", "a", "B", "denied", "Denied", "x.y", "(x)", "a*", "fatal: A", "\n", "a\nb");
const stderrText = fc
  .array(fc.oneof(word, text(12)), { maxLength: 8 })
  .chain((parts) => fc.constantFrom("\n", "\r\n", "\r").map((sep) => parts.join(sep)));
const rule: fc.Arbitrary<RunnerFailureRule> = fc.record(
  {
    allowedExitCodes: fc.array(fc.integer({ min: -2, max: 3 }), { maxLength: 3 }),
    fatalSignatures: fc.array(fc.oneof(word, text(6)), { maxLength: 3 }),
    informationalLines: fc.array(fc.oneof(word, text(8)), { maxLength: 3 }),
  },
  { requiredKeys: ["fatalSignatures"] },
);
const dialect: fc.Arbitrary<ConfinedRunDialect> = fc.record({
  denialSignatures: fc.array(fc.oneof(word, text(6)), { maxLength: 3 }),
  runnerFailureRules: fc.array(rule, { maxLength: 3 }),
});
const exitCode = fc.oneof(fc.constant(null), fc.integer({ min: -2, max: 3 }));

/** The documented semantics, written the obvious way. */
function model(exit: number | null, stderr: string, confined: ConfinedRunDialect): ConfinedRunClassification {
  if (exit === 0) return { outcome: "ok" };
  const lines = stderr.split(/\r\n|\n|\r/);
  const first = (signatures: readonly string[], skipped: ReadonlySet<string>) => {
    const needles = signatures.filter((s) => s.length > 0 && !/[\r\n]/.test(s)).map((s) => s.toLowerCase());
    return lines.find(
      (line) =>
        !skipped.has(line.toLowerCase()) && needles.some((needle) => line.toLowerCase().includes(needle)),
    );
  };
  for (const r of confined.runnerFailureRules) {
    if (r.allowedExitCodes !== undefined && (exit === null || !r.allowedExitCodes.includes(exit))) continue;
    const line = first(r.fatalSignatures, new Set((r.informationalLines ?? []).map((l) => l.toLowerCase())));
    if (line !== undefined) return { outcome: "runner-failure", detail: line };
  }
  const denial = first(confined.denialSignatures, new Set());
  return denial === undefined ? { outcome: "failed" } : { outcome: "denied", detail: denial };
}

describe("classifyConfinedRun (properties)", () => {
  it("exit code 0 is ok, whatever stderr and the dialect say", () => {
    fc.assert(
      fc.property(stderrText, dialect, (stderr, confined) => {
        expect(classifyConfinedRun({ exitCode: 0, stderr }, confined)).toEqual({ outcome: "ok" });
      }),
      { numRuns: 200 },
    );
  });

  it("any other exit: the documented rule semantics (runner failure gated by exit code, informational lines skipped, then denial, else failed)", () => {
    fc.assert(
      fc.property(exitCode, stderrText, dialect, (exit, stderr, confined) => {
        expect(classifyConfinedRun({ exitCode: exit, stderr }, confined)).toEqual(
          model(exit, stderr, confined),
        );
      }),
      { numRuns: 500 },
    );
  });

  it("a detail is always one verbatim line of stderr", () => {
    fc.assert(
      fc.property(exitCode, stderrText, dialect, (exit, stderr, confined) => {
        const { detail } = classifyConfinedRun({ exitCode: exit, stderr }, confined);
        if (detail !== undefined) expect(stderr.split(/\r\n|\n|\r/)).toContain(detail);
      }),
      { numRuns: 300 },
    );
  });
});
