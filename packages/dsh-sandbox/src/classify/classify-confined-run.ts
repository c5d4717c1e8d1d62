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
 * - `denied` — the command ran and a file effect (or, under `network: "deny"`, a
 *   network connection) was blocked by the sandbox;
 * - `failed` — an ordinary task failure.
 */
export type ConfinedRunOutcome = "ok" | "runner-failure" | "denied" | "failed";

/** Result of {@link classifyConfinedRun}. */
export interface ConfinedRunClassification {
  /** The attribution. */
  outcome: ConfinedRunOutcome;
  /** The stderr line (verbatim) that proved `runner-failure` or `denied`. */
  detail?: string;
  /** `"network"` when `denied` was a connection the cut network refused; absent for file effects. */
  reason?: "network";
}

/** The part of a {@link ConfinedArgv} that classification reads. */
export type ConfinedRunDialect = Pick<ConfinedArgv, "denialSignatures" | "runnerFailureRules" | "network">;

/**
 * Stderr text of a connection the cut network refused, as the usual clients
 * print it: Node's `connect EACCES`/`EPERM`/`ENETUNREACH` (the socket filter and
 * Landlock answer `EACCES`), `strerror(ENETUNREACH)`, and curl's "could not
 * connect" (7) and "could not resolve host" (6) — under `network: "deny"`
 * nothing is reachable, so neither can be an ordinary failure. Matched only
 * when the argv reports `network: "deny"`.
 */
export const NETWORK_DENIAL_SIGNATURES: readonly string[] = Object.freeze([
  "connect EACCES",
  "connect EPERM",
  "connect ENETUNREACH",
  "Network is unreachable",
  "curl: (6)",
  "curl: (7)",
]);

/**
 * Attribute a finished confined run. Exit code 0 is `ok`. Otherwise runner
 * failure is checked first, rule by rule: the rule's `allowedExitCodes` gate
 * (when present) must hold, lines equal to one of its `informationalLines`
 * (case-insensitive, exact full line) are removed, and one remaining line must
 * contain one of its `fatalSignatures` (case-insensitive substring) — exit
 * status alone never proves runner failure. Then a line containing one of the
 * backend's own `denialSignatures` (case-insensitive) makes it `denied`; then,
 * when the argv reports `network: "deny"`, a line containing one of
 * {@link NETWORK_DENIAL_SIGNATURES} makes it `denied` with `reason: "network"`;
 * else `failed`. The matching line is returned as `detail`; stderr is never
 * rewritten. Empty signatures are ignored (they would match every line).
 * Stderr is guest-controlled, so the result is an attribution, not proof.
 */
export function classifyConfinedRun(
  run: ConfinedRunResult,
  confined: ConfinedRunDialect,
): ConfinedRunClassification {
  if (run.exitCode === 0) return { outcome: "ok" };
  const stderr = run.stderr;
  for (const rule of confined.runnerFailureRules) {
    const line = matchRunnerFailureRule(rule, run.exitCode, stderr);
    if (line !== undefined) return { outcome: "runner-failure", detail: line };
  }
  const denial = firstLineContaining(stderr, confined.denialSignatures, undefined);
  if (denial !== undefined) return { outcome: "denied", detail: denial };
  if (confined.network === "deny") {
    const refused = firstLineContaining(stderr, NETWORK_DENIAL_SIGNATURES, undefined);
    if (refused !== undefined) return { outcome: "denied", detail: refused, reason: "network" };
  }
  return { outcome: "failed" };
}

function matchRunnerFailureRule(
  rule: RunnerFailureRule,
  exitCode: number | null,
  stderr: string,
): string | undefined {
  if (exitCode === 0) return undefined;
  if (
    rule.allowedExitCodes !== undefined &&
    (exitCode === null || !rule.allowedExitCodes.includes(exitCode))
  ) {
    return undefined;
  }
  const informational = new Set((rule.informationalLines ?? []).map((line) => line.toLowerCase()));
  return firstLineContaining(stderr, rule.fatalSignatures, informational);
}

/**
 * The first line of `text` (lines end at `\r\n`, `\n` or a lone `\r`) that
 * contains one of `signatures` case-insensitively and is not one of the
 * (lower-cased) `skipped` lines. One case-insensitive regular-expression scan
 * over the whole text: no per-line copies, so a huge stderr costs linear time
 * and no extra memory. Empty signatures, and signatures spanning a line break
 * (which can never lie within one line), are ignored.
 */
function firstLineContaining(
  text: string,
  signatures: readonly string[],
  skipped: ReadonlySet<string> | undefined,
): string | undefined {
  const needles = signatures.filter((s) => s.length > 0 && !/[\r\n]/.test(s));
  if (needles.length === 0) return undefined;
  const pattern = new RegExp(needles.map(escapeRegExp).join("|"), "gi");
  let from = 0;
  while (from <= text.length) {
    pattern.lastIndex = from;
    const match = pattern.exec(text);
    if (match === null) return undefined;
    const start = lineStart(text, match.index);
    const end = lineEnd(text, match.index);
    const line = text.slice(start, end);
    if (skipped === undefined || !skipped.has(line.toLowerCase())) return line;
    from = end + 1; // past the line break
  }
  return undefined;
}

function lineStart(text: string, index: number): number {
  let start = index;
  while (start > 0 && !isLineBreak(text.charCodeAt(start - 1))) start--;
  return start;
}

function lineEnd(text: string, index: number): number {
  let end = index;
  while (end < text.length && !isLineBreak(text.charCodeAt(end))) end++;
  return end;
}

function isLineBreak(code: number): boolean {
  return code === 10 || code === 13;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
