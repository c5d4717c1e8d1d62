import type { ConfinedArgv, RunnerFailureRule } from "../policy/sandbox-policy-types.js";

/** What a confined process reported when it ended. */
export interface ConfinedRunResult {
  /** Exit code, or `null` when the process ended on a signal (counts as non-zero). */
  exitCode: number | null;
  /** The process's complete (possibly bounded) stderr text. */
  stderr: string;
}

/**
 * Attribution of a confined run:
 * - `ok` — exit code 0;
 * - `runner-failure` — the sandbox runner failed before running the command (sandbox infrastructure failure);
 * - `denied` — the command ran and a file effect was blocked by the sandbox;
 * - `failed` — an ordinary task failure.
 */
export type ConfinedRunOutcome = "ok" | "runner-failure" | "denied" | "failed";

/** Result of {@link classifyConfinedRun}. */
export interface ConfinedRunClassification {
  /** The attribution. */
  outcome: ConfinedRunOutcome;
  /** The stderr line (verbatim) that proved `runner-failure` or `denied`. */
  detail?: string;
}

/** The part of a {@link ConfinedArgv} that classification reads. */
export type ConfinedRunDialect = Pick<ConfinedArgv, "denialSignatures" | "runnerFailureRules">;

/**
 * Attribute a finished confined run. Exit code 0 is `ok`. Otherwise runner
 * failure is checked first, rule by rule: the rule's `allowedExitCodes` gate
 * (when present) must hold, lines equal to one of its `informationalLines`
 * (case-insensitive, exact full line) are removed, and one remaining line must
 * contain one of its `fatalSignatures` (case-insensitive substring) — exit
 * status alone never proves runner failure. Then a line containing one of the
 * backend's own `denialSignatures` (case-insensitive) makes it `denied`; else
 * `failed`. The matching line is returned as `detail`; stderr is never
 * rewritten. Empty signatures are ignored (they would match every line).
 * Stderr is guest-controlled, so the result is an attribution, not proof.
 */
export function classifyConfinedRun(
  run: ConfinedRunResult,
  confined: ConfinedRunDialect,
): ConfinedRunClassification {
  if (run.exitCode === 0) return { outcome: "ok" };
  const lines = run.stderr.split(/\r?\n/);
  for (const rule of confined.runnerFailureRules) {
    const line = matchRunnerFailureRule(rule, run.exitCode, lines);
    if (line !== undefined) return { outcome: "runner-failure", detail: line };
  }
  const denial = firstLineContaining(lines, confined.denialSignatures);
  if (denial !== undefined) return { outcome: "denied", detail: denial };
  return { outcome: "failed" };
}

function matchRunnerFailureRule(
  rule: RunnerFailureRule,
  exitCode: number | null,
  lines: readonly string[],
): string | undefined {
  if (exitCode === 0) return undefined;
  if (
    rule.allowedExitCodes !== undefined &&
    (exitCode === null || !rule.allowedExitCodes.includes(exitCode))
  ) {
    return undefined;
  }
  const informational = new Set((rule.informationalLines ?? []).map((line) => line.toLowerCase()));
  const remaining = lines.filter((line) => !informational.has(line.toLowerCase()));
  return firstLineContaining(remaining, rule.fatalSignatures);
}

function firstLineContaining(lines: readonly string[], signatures: readonly string[]): string | undefined {
  const needles = signatures.filter((s) => s.length > 0).map((s) => s.toLowerCase());
  if (needles.length === 0) return undefined;
  for (const line of lines) {
    const lower = line.toLowerCase();
    if (needles.some((needle) => lower.includes(needle))) return line;
  }
  return undefined;
}
