import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import {
  createSandbox,
  loadToolModule,
  type SandboxRunResult,
  type ToolSet,
  toolDeclarations,
} from "@suaveplan/sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { renderJson, renderText } from "@suaveplan/sandbox-core/render";
import {
  ENGINE_NAMES,
  type EngineName,
  type LogEntry,
  type SandboxLanguage,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES, type ExitCode } from "../cli/exit-codes.js";
import { STOP_EXIT_CODES, type StopReason } from "../cli/process-stop.js";
import { UsageError } from "../cli/usage-error.js";
import { isolatedVmInstalled, missingIsolatedVmMessage } from "./isolated-vm-installed.js";

/** Where the code comes from: a file, an inline string, or standard input. */
export type RunSource = { kind: "file"; path: string } | { kind: "inline"; code: string } | { kind: "stdin" };

/** Parsed `run` options (units in the names). */
export interface RunOptions {
  /** Engines to run, in order. */
  engines: EngineName[];
  /** True when `--engine` was not given: the default, isolate, needs isolated-vm installed. */
  defaultEngine?: boolean;
  timeoutMs?: number;
  memoryBytes?: number;
  maxOutputBytes?: number;
  context: Record<string, unknown>;
  json: boolean;
  /** Host tools the code may call as `await tools.<name>(input)`. */
  tools?: ToolSet;
  /** The code's language (a `.ts`/`.mts` FILE or `--ts` is TypeScript). Default JavaScript. */
  language?: SandboxLanguage;
  /** `--typecheck`: check the TypeScript before it runs. */
  typecheck?: boolean;
}

/** Import `--tools <module>` (relative to the current directory): its default export must be an object of tool definitions. */
export async function loadTools(path: string, io: CliIo): Promise<ToolSet> {
  try {
    return await loadToolModule(path, io.cwd);
  } catch (error) {
    throw new UsageError(`--tools: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** `--print-declarations`: the TypeScript text of the guest's `tools` global, for a model's prompt. */
export function printDeclarations(tools: ToolSet | undefined, io: CliIo): ExitCode {
  try {
    io.stdout(`${toolDeclarations(tools)}\n`);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return EXIT_CODES.ok;
}

/**
 * Run the code under each selected engine; the exit code is the worst outcome,
 * or {@link STOP_EXIT_CODES}' code when a signal or a closed output pipe
 * stopped the CLI: the running execution is cancelled, its sandbox destroyed
 * (worker, child or helper process ended) and nothing more is printed.
 */
export async function runCommand(source: RunSource, options: RunOptions, io: CliIo): Promise<number> {
  if (options.defaultEngine === true && !isolatedVmInstalled())
    throw new UsageError(missingIsolatedVmMessage());
  const code = await readSource(source, io);
  const cancel = new AbortController();
  let stopped: StopReason | undefined;
  const unregister = io.onStop?.((reason) => {
    stopped ??= reason;
    cancel.abort();
  });
  const results: Array<{ engine: EngineName; result: SandboxResult }> = [];
  try {
    for (const engine of options.engines) {
      const result = options.json
        ? await runQuiet(engine, code, options, cancel.signal)
        : await runStreaming(engine, code, options, io, cancel.signal, () => stopped === undefined);
      // On vm, node hands a Ctrl-C to the running guest code (breakOnSigint), which ends the run
      // cancelled without the CLI's SIGINT listener seeing it; nothing else cancels a CLI run.
      if (stopped === undefined && result.errorCode === SANDBOX_CODES.CANCELLED) stopped = "SIGINT";
      if (stopped !== undefined) break;
      results.push({ engine, result });
    }
  } finally {
    unregister?.();
  }
  if (stopped !== undefined) {
    if (stopped !== "EPIPE") io.stderr(`suaveplan-sandbox: interrupted by ${stopped}\n`);
    return STOP_EXIT_CODES[stopped];
  }
  if (options.json) {
    const payload =
      results.length === 1
        ? jsonResult(results[0]?.result)
        : results.map(({ engine, result }) => ({ engine, ...jsonResult(result) }));
    io.stdout(`${JSON.stringify(payload, null, 2)}\n`);
  } else if (results.length > 1) {
    io.stdout(summaryTable(results));
  }
  return results.reduce<ExitCode>((worst, { result }) => worstOf(worst, exitCodeOf(result)), EXIT_CODES.ok);
}

/** Map a result to the CLI's exit code. */
export function exitCodeOf(result: SandboxResult): ExitCode {
  if (result.success) return EXIT_CODES.ok;
  if (result.errorCode === SANDBOX_CODES.TIMEOUT || result.errorCode === SANDBOX_CODES.MEMORY_EXCEEDED) {
    return EXIT_CODES.limit;
  }
  return EXIT_CODES.failed;
}

function worstOf(a: ExitCode, b: ExitCode): ExitCode {
  const rank = (c: ExitCode) =>
    c === EXIT_CODES.limit ? 3 : c === EXIT_CODES.failed ? 2 : c === EXIT_CODES.usage ? 4 : 0;
  return rank(b) > rank(a) ? b : a;
}

async function readSource(source: RunSource, io: CliIo): Promise<string> {
  if (source.kind === "inline") return source.code;
  if (source.kind === "stdin") return io.readStdin();
  try {
    return await readFile(resolve(io.cwd, source.path), "utf8");
  } catch (error) {
    throw new UsageError(
      `cannot read FILE ${JSON.stringify(source.path)}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
}

function sandboxFor(engine: EngineName, options: RunOptions) {
  try {
    return createSandbox({
      engine,
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
      ...(options.memoryBytes === undefined ? {} : { memoryLimit: options.memoryBytes }),
      ...(options.maxOutputBytes === undefined ? {} : { maxOutputSize: options.maxOutputBytes }),
      ...(options.tools === undefined ? {} : { tools: options.tools }),
      ...(options.language === undefined ? {} : { language: options.language }),
      ...(options.typecheck === true ? { typecheck: true } : {}),
      // A Ctrl-C stops vm's and quickjs's synchronous guest code too (it runs on the CLI's own thread).
      ...(engine === "vm" || engine === "quickjs" ? { engineOptions: { breakOnSigint: true } } : {}),
    });
  } catch (error) {
    if (error instanceof SandboxError) throw new UsageError(error.message);
    throw error;
  }
}

async function runQuiet(
  engine: EngineName,
  code: string,
  options: RunOptions,
  signal: AbortSignal,
): Promise<SandboxRunResult> {
  await using sandbox = sandboxFor(engine, options);
  // `return await`: the sandbox must outlive the execution it is disposed after.
  return await sandbox.execute(code, options.context, { signal });
}

async function runStreaming(
  engine: EngineName,
  code: string,
  options: RunOptions,
  io: CliIo,
  signal: AbortSignal,
  printing: () => boolean,
): Promise<SandboxResult> {
  await using sandbox = sandboxFor(engine, options);
  const capabilities = await sandbox.getCapabilities();
  io.stdout(`── ${engine}: ${capabilities.tier}\n`);
  let result: SandboxResult | undefined;
  for await (const chunk of sandbox.executeStream(code, options.context, { signal })) {
    if (chunk.type === "log") io.stdout(formatLog({ level: chunk.level ?? "log", message: chunk.data }));
    else if (chunk.type === "complete") result = chunk.data;
  }
  if (!result) throw new Error("executeStream ended without a result");
  if (printing() && result.errorCode !== SANDBOX_CODES.CANCELLED) io.stdout(formatResult(engine, result));
  return result;
}

function formatLog(entry: LogEntry): string {
  const prefix = entry.level === "log" || entry.level === "info" ? "" : `[${entry.level}] `;
  return `${prefix}${entry.message}\n`;
}

function formatResult(engine: EngineName, result: SandboxResult): string {
  const ms = `${result.duration.toFixed(1)} ms`;
  if (result.success) return `✔ ${engine}: ${preview(result.result)} (${ms})\n`;
  const code = result.errorCode ?? "error";
  // Engine messages usually end with their own "(CODE)", maybe "; see <page of CODE>"; say the code once, up front.
  const error = result.error ?? "failed";
  const tag = ` (${code})`;
  const at = error.lastIndexOf(tag);
  const rest = at === -1 ? "" : error.slice(at + tag.length);
  const message = at !== -1 && (rest === "" || /^; see \S+$/.test(rest)) ? error.slice(0, at) : error;
  const diagnostics = (result.diagnostics ?? []).map(
    (d) => `  ${d.line}:${d.column}  TS${d.code}  ${d.message.replaceAll("\n", " ")}\n`,
  );
  return `✘ ${engine}: ${code}: ${message} (${ms})\n${diagnostics.join("")}`;
}

/**
 * A result for `--json`: the guest's values (the result, tool inputs and
 * outputs) through the bounded renderer, so BigInt, NaN, Map, Error and huge
 * or shared graphs stay valid, bounded JSON (`{"$bigint":"1"}`, …; see
 * sandbox-core's README, "Rendering values"). The rest is the host's own data.
 */
function jsonResult(
  result: SandboxResult | SandboxRunResult | undefined,
): Record<string, unknown> | undefined {
  if (result === undefined) return undefined;
  const calls = "calls" in result ? result.calls : undefined;
  return {
    ...result,
    ...(result.success ? { result: renderJson(result.result).json } : {}),
    ...(calls === undefined
      ? {}
      : {
          calls: calls.map((call) => ({
            ...call,
            ...(call.input === undefined ? {} : { input: renderJson(call.input).json }),
            ...(call.output === undefined ? {} : { output: renderJson(call.output).json }),
          })),
        }),
  };
}

/** A guest value as text, in util.inspect's notation and within the renderer's budgets. */
function preview(value: unknown): string {
  return renderText(value).text;
}

function summaryTable(results: Array<{ engine: EngineName; result: SandboxResult }>): string {
  const rows = results.map(({ engine, result }) => [
    engine,
    result.success ? "ok" : (result.errorCode ?? "failed"),
    `${result.duration.toFixed(1)} ms`,
    String(result.logs.length),
    // One line per row: the preview's line breaks become spaces (the cell is cut at 60 characters anyway).
    result.success ? preview(result.result).replace(/\s*\n\s*/g, " ") : (result.error ?? ""),
  ]);
  const header = ["engine", "outcome", "duration", "logs", "result"];
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => Math.min(60, (r[i] ?? "").length))),
  );
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.slice(0, 60).padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return `\n${line(header)}\n${line(widths.map((w) => "-".repeat(w)))}\n${rows.map(line).join("\n")}\n`;
}

/** Parse `--engine`: one name, a comma list, or `all`. */
export function parseEngines(value: string): EngineName[] {
  if (value === "all") return [...ENGINE_NAMES];
  const names = value.split(",").map((n) => n.trim());
  for (const name of names) {
    if (!(ENGINE_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--engine: unknown engine ${JSON.stringify(name)}; use one of ${ENGINE_NAMES.join(", ")} or all`,
      );
    }
  }
  return names as EngineName[];
}
