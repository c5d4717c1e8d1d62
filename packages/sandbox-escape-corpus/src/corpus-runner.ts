import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createVmSandbox } from "@suaveplan/api-sandbox-vm";
import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { createSandbox, engineLoader, type Sandbox } from "@suaveplan/sandbox";
import { CodeTransformer } from "@suaveplan/sandbox-core/code-transformer";
import type { SandboxEngine, SandboxResult } from "@suaveplan/sandbox-core/types";
import { createToolRunner, normaliseTools } from "@suaveplan/sandbox-tools";
import type { CorpusHost } from "./corpus-host.js";
import type { CorpusEngine, CorpusTarget, EscapeTechnique, ExpectedOutcome } from "./escape-techniques.js";
import { guestPrelude } from "./guest-prelude.js";

/** How a technique reached the target: the facade (transformer on), the raw engine class, the facade with host tools, or the plugin host. */
export type CorpusColumn = "facade" | "raw" | "tools" | "plugin";

/**
 * The verdict of one cell. Passing: `blocked` (the facade's CodeTransformer refused the code),
 * `contained` (it ran; the host saw no secret, no canary, no reached process, no pollution),
 * `expected-failure` (DoS/persist: it ended with the expected outcome), `declared` (a declared
 * gap, as declared), `n/a` (needs tools the column does not have). Failing: everything else.
 */
export type CellVerdict =
  | "blocked"
  | "contained"
  | "expected-failure"
  | "declared"
  | "n/a"
  | "escaped"
  | "host-polluted"
  | "reached-process"
  | "host-died"
  | "unexpected-outcome"
  | "next-run-confused";

/** The passing verdicts. */
export const PASSING_VERDICTS: ReadonlySet<CellVerdict> = new Set([
  "blocked",
  "contained",
  "expected-failure",
  "declared",
  "n/a",
]);

/** One cell of the escape matrix. */
export interface CorpusCell {
  readonly technique: string;
  readonly target: CorpusTarget;
  readonly column: CorpusColumn;
  readonly verdict: CellVerdict;
  /** `ok`, the error code, or `blocked by <rule>`. */
  readonly outcome: string;
  /** Why a cell failed, or the declared gap's note. */
  readonly detail?: string;
  /** The start of what the guest returned or the error text (guest-chosen text, for reading only). */
  readonly observed?: string;
}

/** Limits every corpus run gets (small, so DoS cases end fast). */
export const CORPUS_LIMITS = {
  timeout: 3_000,
  memoryLimit: 64 * 1024 * 1024,
  maxOutputSize: 64 * 1024,
} as const;

/** A program after the next run: planted state, poisoned intrinsics and leftover timers must be gone. */
const NEXT_RUN_PROBE = `[Object.keys(Object.prototype).length, typeof globalThis.planted, [1].map((x) => x + 1)[0], JSON.stringify({ a: 1 }), typeof Function.prototype.call === "function" && (() => 7).call(null)]`;
const NEXT_RUN_EXPECTED = JSON.stringify([0, "undefined", 2, '{"a":1}', 7]);

const transformer = new CodeTransformer({ maxCodeLength: 1_000_000 });

/** The guest program a technique becomes on an engine (the prelude, then the technique's body). */
export function engineProgram(host: CorpusHost, technique: EscapeTechnique): string {
  return `${guestPrelude({ secretName: "SUAVEPLAN_ESCAPE_SECRET", canaryPath: host.canaryPath })}\n${technique.code}`;
}

/** Whether the facade's CodeTransformer refuses the technique, and by which rule. */
export function transformerVerdict(host: CorpusHost, technique: EscapeTechnique): string | undefined {
  const result = transformer.transform(engineProgram(host, technique));
  return result.blocked ? (result.blockedBy ?? "unknown-rule") : undefined;
}

function matches(expected: ExpectedOutcome, outcome: string): boolean {
  return expected === "ok" ? outcome === "ok" : expected.includes(outcome);
}

/** The verdict from what the host saw and the outcome, before the next-run check. */
function judgeCell(
  host: CorpusHost,
  technique: EscapeTechnique,
  target: CorpusTarget,
  outcome: string,
  seen: readonly unknown[],
): { verdict: CellVerdict; detail?: string } {
  const findings = host.judge(seen);
  if (findings.escaped) return { verdict: "escaped", detail: "the secret or the canary reached the host" };
  if (findings.hostPolluted.length > 0)
    return { verdict: "host-polluted", detail: findings.hostPolluted.join(", ") };
  if (findings.reachedProcess)
    return { verdict: "reached-process", detail: "the snippet held a Node process" };
  if (outcome.startsWith("blocked by ")) return { verdict: "blocked" };
  // The confined spawn tier runs the same child: what is declared or expected of spawn holds for it.
  const key: CorpusTarget = target === "spawn-confined" ? "spawn" : target;
  const declared = technique.declared?.[key];
  if (declared !== undefined) {
    return matches(declared.outcome, outcome)
      ? { verdict: "declared", detail: declared.note }
      : {
          verdict: "unexpected-outcome",
          detail: `declared ${JSON.stringify(declared.outcome)}, got ${outcome}`,
        };
  }
  const expected = technique.expect?.[key];
  if (expected !== undefined) {
    return matches(expected, outcome)
      ? { verdict: technique.kind === "escape" ? "contained" : "expected-failure" }
      : { verdict: "unexpected-outcome", detail: `expected ${JSON.stringify(expected)}, got ${outcome}` };
  }
  if (technique.kind === "escape") return { verdict: "contained" };
  return {
    verdict: "unexpected-outcome",
    detail: `no expected outcome declared for ${target}; got ${outcome}`,
  };
}

function observed(value: unknown): string {
  let text: string;
  try {
    text =
      typeof value === "string"
        ? value
        : (JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)) ?? "undefined");
  } catch {
    text = String(value);
  }
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function outcomeOf(result: SandboxResult): string {
  return result.success ? "ok" : (result.errorCode ?? "failed");
}

/**
 * One raw engine per corpus engine, made as `createSandbox` makes it, from the umbrella's
 * registry (`spawn-confined`: spawn with `confinement`).
 */
async function rawEngine(
  engine: CorpusEngine,
  confinement: LocalSandboxProvider | undefined,
): Promise<SandboxEngine> {
  const factory = await engineLoader(engine === "spawn-confined" ? "spawn" : engine)();
  return factory.create({ limits: CORPUS_LIMITS, options: confinement === undefined ? {} : { confinement } });
}

/** The OS confinement of the `spawn-confined` tier: bwrap or Landlock, read-only, network cut. */
export function corpusConfinement(): LocalSandboxProvider {
  return new LocalSandboxProvider({ network: "deny" });
}

const HOST_PROCESS = new URL("./corpus-host-process.mjs", import.meta.url);

/** The plugin module a technique becomes in the plugin host. */
function pluginModule(host: CorpusHost, technique: EscapeTechnique): string {
  return `${guestPrelude({ secretName: "SUAVEPLAN_ESCAPE_SECRET", canaryPath: host.canaryPath })}
export async function run() {
${technique.code}
}
export function probe() { return ${NEXT_RUN_PROBE}; }
`;
}

/** One column as the host process reported it, or `undefined` when the process died before it ended. */
interface HostProcessReport {
  readonly column: CorpusColumn;
  readonly outcome: string;
  readonly seen: string;
}

/**
 * Runs columns in a throw-away host process (`corpus-host-process.mjs`, on the built packages),
 * one after the other. When the process dies, the first column it did not finish is `host-died`
 * and the columns after it run again in a fresh process.
 */
async function runInHostProcess(
  host: CorpusHost,
  columns: readonly CorpusColumn[],
  target: CorpusTarget,
  technique: EscapeTechnique,
): Promise<CorpusCell[]> {
  const dir = await mkdtemp(join(tmpdir(), "suaveplan-escape-host-"));
  try {
    const plugin = columns[0] === "plugin";
    const file = join(dir, plugin ? "plugin.mjs" : "program.js");
    await writeFile(file, plugin ? pluginModule(host, technique) : engineProgram(host, technique));
    const limits = {
      ...CORPUS_LIMITS,
      ...(technique.timeoutMs === undefined ? {} : { timeout: technique.timeoutMs }),
    };
    const cells: CorpusCell[] = [];
    let remaining = [...columns];
    while (remaining.length > 0) {
      const { exitCode, stdout, stderr } = await new Promise<{
        exitCode: number | null;
        stdout: string;
        stderr: string;
      }>((resolve) => {
        execFile(
          process.execPath,
          [
            "--no-node-snapshot",
            // vm bombs fill the host's own heap: keep it small. Nowhere else: the flag would also
            // replace a worker's resourceLimits heap limit (nodejs/node#43991).
            ...(target === "vm" ? ["--max-old-space-size=128"] : []),
            fileURLToPath(HOST_PROCESS),
            remaining.join(","),
            target,
            file,
            JSON.stringify(limits),
          ],
          { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
          (error, out, err) => {
            const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
            resolve({ exitCode: code, stdout: String(out), stderr: String(err) });
          },
        );
      });
      const reports = stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as HostProcessReport);
      for (const report of reports)
        cells.push(hostProcessCell(host, technique, target, report.column, report.outcome, report.seen));
      remaining = remaining.slice(reports.length);
      if (remaining.length > 0 && exitCode !== 0) {
        const [died, ...rest] = remaining as [CorpusColumn, ...CorpusColumn[]];
        const fatal = stderr.split("\n").find((line) => line.includes("FATAL")) ?? stderr.slice(0, 300);
        cells.push(
          hostProcessCell(host, technique, target, died, "host-died", `${stdout}\n${stderr}`, fatal),
        );
        remaining = rest;
      } else if (remaining.length > 0) {
        throw new Error(
          `host process ended without reporting ${remaining.join(", ")}: ${stderr.slice(0, 500)}`,
        );
      }
    }
    return cells;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function hostProcessCell(
  host: CorpusHost,
  technique: EscapeTechnique,
  target: CorpusTarget,
  column: CorpusColumn,
  reported: string,
  seen: string,
  fatal?: string,
): CorpusCell {
  const blocked = column === "facade" || column === "tools" ? transformerVerdict(host, technique) : undefined;
  const outcome =
    blocked !== undefined && reported === "SANDBOX_CODE_BLOCKED" ? `blocked by ${blocked}` : reported;
  const judged = judgeCell(host, technique, target, outcome, [seen]);
  return { technique: technique.name, target, column, outcome, ...judged, observed: observed(fatal ?? seen) };
}

/** Runs every technique of the corpus against one engine in three columns: facade, raw, tools. */
export interface EngineCorpusRun {
  run(technique: EscapeTechnique): Promise<CorpusCell[]>;
  destroy(): Promise<void>;
}

/**
 * The three columns of one engine: the facade (`createSandbox` with the host tools, the
 * CodeTransformer on — the default code-mode configuration), the raw engine class, and the raw
 * engine with the host tools as `hostCalls` (the boundary alone, with tools: what the
 * transformer would have refused still runs here). Each keeps one sandbox across techniques, so
 * the next-run check means something.
 */
export function createEngineCorpusRun(host: CorpusHost, engine: CorpusEngine): EngineCorpusRun {
  const confinement = engine === "spawn-confined" ? corpusConfinement() : undefined;
  const facade = createSandbox({
    engine: engine === "spawn-confined" ? "spawn" : engine,
    ...(confinement === undefined ? {} : { engineOptions: { confinement } }),
    ...CORPUS_LIMITS,
    enableAudit: true,
    tools: host.tools,
  });
  // Every use awaits it; a failure to load shows at the first use, not as an unhandled rejection.
  const raw = rawEngine(engine, confinement);
  raw.catch(() => undefined);
  const tools = normaliseTools(host.tools);

  /**
   * The next-run probe follows every technique on vm, isolate and quickjs (one process, a realm
   * per run; quickjs keeps its QuickJS instances — WebAssembly memories restored from an image —
   * warm between runs: where leftover state could show). worker and spawn start a fresh
   * worker/child for every execution by design, so there the probe follows the persistence
   * techniques only (time).
   */
  const probesNextRun = (technique: EscapeTechnique) =>
    engine === "vm" || engine === "isolate" || engine === "quickjs" || technique.kind === "persist";

  async function runFacade(sandbox: Sandbox, technique: EscapeTechnique) {
    const column = "facade";
    const program = engineProgram(host, technique);
    const options = technique.timeoutMs === undefined ? {} : { timeout: technique.timeoutMs };
    const result = await sandbox.execute(program, {}, options);
    const blocked = transformerVerdict(host, technique);
    const outcome =
      result.success === false && result.errorCode === "SANDBOX_CODE_BLOCKED" && blocked !== undefined
        ? `blocked by ${blocked}`
        : outcomeOf(result);
    const judged = judgeCell(host, technique, engine, outcome, [result, sandbox.getAuditLog()]);
    const cell: CorpusCell = {
      technique: technique.name,
      target: engine,
      column,
      outcome,
      ...judged,
      observed: observed(result.success ? result.result : result.error),
    };
    return probesNextRun(technique) ? nextRunChecked(cell, () => sandbox.execute(NEXT_RUN_PROBE)) : cell;
  }

  async function runRaw(technique: EscapeTechnique, column: "raw" | "tools") {
    const program = engineProgram(host, technique);
    const runner = column === "tools" ? createToolRunner({ tools }) : undefined;
    const options = {
      ...(technique.timeoutMs === undefined ? {} : { timeout: technique.timeoutMs }),
      ...(runner === undefined ? {} : { hostCalls: runner }),
    };
    const result = await (await raw).execute(program, {}, options);
    runner?.close();
    const outcome = outcomeOf(result);
    const judged = judgeCell(host, technique, engine, outcome, [result, runner?.journal() ?? []]);
    const cell: CorpusCell = {
      technique: technique.name,
      target: engine,
      column,
      outcome,
      ...judged,
      observed: observed(result.success ? result.result : result.error),
    };
    return probesNextRun(technique)
      ? nextRunChecked(cell, async () => (await raw).execute(NEXT_RUN_PROBE))
      : cell;
  }

  return {
    async run(technique) {
      if (technique.isolatedHost === true)
        return runInHostProcess(host, ["facade", "raw", "tools"], engine, technique);
      const rawCell: CorpusCell =
        technique.needsTools === true
          ? { technique: technique.name, target: engine, column: "raw", verdict: "n/a", outcome: "n/a" }
          : await runRaw(technique, "raw");
      return [await runFacade(facade, technique), rawCell, await runRaw(technique, "tools")];
    },
    async destroy() {
      await Promise.all([facade.destroy(), raw.then((engine) => engine.destroy())]);
      confinement?.dispose();
    },
  };
}

/** After a cell, the same sandbox must run the next program as if nothing happened. */
async function nextRunChecked(cell: CorpusCell, next: () => Promise<SandboxResult>): Promise<CorpusCell> {
  if (!PASSING_VERDICTS.has(cell.verdict)) return cell;
  const probe = await next();
  const seen = probe.success ? JSON.stringify(probe.result) : `${probe.errorCode}: ${probe.error}`;
  if (seen === NEXT_RUN_EXPECTED && probe.logs.length === 0) return cell;
  return {
    ...cell,
    verdict: "next-run-confused",
    detail: `next run saw ${seen} with ${probe.logs.length} log line(s)`,
  };
}

/** A declared gap of the plugin host (issue 14), asserted only where it shows. */
export const PLUGIN_NEXT_CALL_GAP =
  "KNOWN GAP: after a call that timed out, the plugin host fails the next, innocent call too (issue 14, 'the plugin host blames the next call')";

/** The plugin host column: one plugin sandbox per technique (the plugin is the technique). */
export async function runPluginCell(host: CorpusHost, technique: EscapeTechnique): Promise<CorpusCell> {
  if (technique.isolatedHost === true) {
    const [cell] = await runInHostProcess(host, ["plugin"], "plugin", technique);
    if (cell === undefined) throw new Error(`no plugin cell for ${technique.name}`);
    return cell;
  }
  const dir = await mkdtemp(join(tmpdir(), "suaveplan-escape-plugin-"));
  const logs: unknown[] = [];
  try {
    const entry = join(dir, "plugin.mjs");
    await writeFile(entry, pluginModule(host, technique));
    const sandbox = await createVmSandbox({
      pluginModulePath: entry,
      policy: { tools: Object.keys(host.tools) },
      tools: host.tools,
      timeoutMs: technique.timeoutMs ?? CORPUS_LIMITS.timeout,
      memoryLimitMb: CORPUS_LIMITS.memoryLimit / 1024 / 1024,
      onLog: (entry) => {
        logs.push(entry);
      },
    });
    try {
      let outcome = "ok";
      const seen: unknown[] = [logs];
      try {
        seen.push(await sandbox.call("run"));
      } catch (error) {
        seen.push(error);
        outcome = String((error as { code?: unknown }).code ?? "failed");
      }
      const judged = judgeCell(host, technique, "plugin", outcome, seen);
      const last = seen.at(-1);
      const cell: CorpusCell = {
        technique: technique.name,
        target: "plugin",
        column: "plugin",
        outcome,
        ...judged,
        observed: observed(last instanceof Error ? last.message : last),
      };
      if (!PASSING_VERDICTS.has(cell.verdict) || sandbox.disposed) return cell;
      let probe: string;
      try {
        probe = JSON.stringify(await sandbox.call("probe"));
      } catch (error) {
        probe = `${String((error as { code?: unknown }).code)}: ${(error as Error).message}`;
      }
      // A plugin instance keeps its module state between calls by design (the README): the probe
      // checks the intrinsics and host state only, not the plugin's own globals.
      if (probe === NEXT_RUN_EXPECTED) return cell;
      if (outcome === "SAND_VM_TIMEOUT")
        return { ...cell, verdict: "declared", detail: `${PLUGIN_NEXT_CALL_GAP} (next call saw ${probe})` };
      return { ...cell, verdict: "next-run-confused", detail: `next call saw ${probe}` };
    } finally {
      await sandbox.dispose();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
