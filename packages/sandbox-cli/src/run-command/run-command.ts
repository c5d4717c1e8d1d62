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
import {
  ENGINE_NAMES,
  type EngineName,
  type LogEntry,
  type SandboxLanguage,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES, type ExitCode } from "../cli/exit-codes.js";
import { UsageError } from "../cli/usage-error.js";

/** Where the code comes from: a file, an inline string, or standard input. */
export type RunSource = { kind: "file"; path: string } | { kind: "inline"; code: string } | { kind: "stdin" };

/** Parsed `run` options (units in the names). */
export interface RunOptions {
  /** Engines to run, in order. */
  engines: EngineName[];
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

/** Run the code under each selected engine; the exit code is the worst outcome. */
export async function runCommand(source: RunSource, options: RunOptions, io: CliIo): Promise<ExitCode> {
  const code = await readSource(source, io);
  const results: Array<{ engine: EngineName; result: SandboxResult }> = [];
  for (const engine of options.engines) {
    const result = options.json
      ? await runQuiet(engine, code, options)
      : await runStreaming(engine, code, options, io);
    results.push({ engine, result });
  }
  if (options.json) {
    const payload =
      results.length === 1
        ? results[0]?.result
        : results.map(({ engine, result }) => ({ engine, ...result }));
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
    });
  } catch (error) {
    if (error instanceof SandboxError) throw new UsageError(error.message);
    throw error;
  }
}

async function runQuiet(engine: EngineName, code: string, options: RunOptions): Promise<SandboxRunResult> {
  await using sandbox = sandboxFor(engine, options);
  // `return await`: the sandbox must outlive the execution it is disposed after.
  return await sandbox.execute(code, options.context);
}

async function runStreaming(
  engine: EngineName,
  code: string,
  options: RunOptions,
  io: CliIo,
): Promise<SandboxResult> {
  await using sandbox = sandboxFor(engine, options);
  const capabilities = await sandbox.getCapabilities();
  io.stdout(`── ${engine}: ${capabilities.tier}\n`);
  let result: SandboxResult | undefined;
  for await (const chunk of sandbox.executeStream(code, options.context)) {
    if (chunk.type === "log") io.stdout(formatLog({ level: chunk.level ?? "log", message: chunk.data }));
    else if (chunk.type === "complete") result = chunk.data;
  }
  if (!result) throw new Error("executeStream ended without a result");
  io.stdout(formatResult(engine, result));
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

function preview(value: unknown): string {
  if (value === undefined) return "undefined";
  const text = JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function summaryTable(results: Array<{ engine: EngineName; result: SandboxResult }>): string {
  const rows = results.map(({ engine, result }) => [
    engine,
    result.success ? "ok" : (result.errorCode ?? "failed"),
    `${result.duration.toFixed(1)} ms`,
    String(result.logs.length),
    result.success ? preview(result.result) : (result.error ?? ""),
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
