import { type JsonValue, renderJson } from "./render-value.js";

/** What a run returned, as far as a report needs it (a facade `SandboxRunResult` fits). */
export interface RunReportInput {
  readonly success: boolean;
  readonly result?: unknown;
  readonly error?: string | undefined;
  readonly errorCode?: string | undefined;
  readonly guestError?:
    | { readonly line?: number | undefined; readonly column?: number | undefined }
    | undefined;
  readonly logs: ReadonlyArray<{ readonly level: string; readonly message: string }>;
  readonly calls: ReadonlyArray<{
    readonly tool: string;
    readonly status: string;
    readonly input?: unknown;
    readonly output?: unknown;
    readonly error?: { readonly name: string; readonly message: string } | undefined;
    readonly durationMs: number;
  }>;
  readonly usage?: object | undefined;
}

/** One tool call of a {@link RunReport}, its input and output rendered with a budget. */
export interface RunReportCall {
  tool: string;
  status: string;
  input?: JsonValue;
  output?: JsonValue;
  error?: { name: string; message: string };
  durationMs: number;
}

/** A run as JSON within a byte budget: what a model or an MCP client is sent. */
export interface RunReport {
  success: boolean;
  /** The completion value as JSON (tags for what JSON cannot say, `$cut` where it was cut). */
  result?: JsonValue;
  error?: { code: string; message: string; line?: number; column?: number };
  logs: Array<{ level: string; message: string }>;
  calls: RunReportCall[];
  usage?: JsonValue;
  /** What was cut to stay within the budget, when anything was. */
  truncated?: string;
  [extra: string]: unknown;
}

/** How {@link renderRunReport} measures and what it adds. */
export interface RunReportLimits {
  /** Bytes the whole response may take, as `measure` counts them. */
  maxBytes: number;
  /**
   * Bytes of what is sent for a report (default: its JSON text). A transport
   * sending the report twice (MCP's structured content and text copy) counts both.
   */
  measure?: (report: RunReport) => number;
  /** How many times the report's JSON is sent (MCP: structured content and its text copy); the first try's budget is `maxBytes / copies`. Default 1. */
  copies?: number;
  /** Fields put first in the report, inside the budget (e.g. what was normalised in the code). */
  head?: Record<string, JsonValue>;
}

const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");
const stringify = JSON.stringify;

/** The least a part is given when it is shown at all, in bytes. */
const FLOOR_BYTES = 256;
/** Bytes of one log line, error message or tool call's input or output at most. */
const PART_BYTES = 8_192;

/**
 * A run as JSON whose measured size stays within `maxBytes`: the completion
 * value is rendered with a budget (`$cut` tags where it was cut), log lines and
 * tool calls are kept in order while they fit, and `truncated` says what was
 * left out. Never walks more than the renderer's node budget, whatever the
 * graph. The MCP server's `run_javascript` and the AI SDK code tool both send this.
 */
export function renderRunReport(run: RunReportInput, limits: RunReportLimits): RunReport {
  const { maxBytes } = limits;
  const measure = limits.measure ?? ((report: RunReport) => byteLength(stringify(report)));
  // Shrink the budget in proportion to the measured overshoot until the report fits.
  let budget = Math.floor(maxBytes / (limits.copies ?? 1));
  for (;;) {
    const report = boundedReport(run, budget, maxBytes, limits.head);
    const size = measure(report);
    if (size <= maxBytes || budget <= FLOOR_BYTES * 2) return report;
    budget = Math.floor((budget * maxBytes) / size) - 64;
  }
}

function boundedReport(
  run: RunReportInput,
  budget: number,
  maxBytes: number,
  head: Record<string, JsonValue> | undefined,
): RunReport {
  const report: RunReport = { success: run.success, ...head, logs: [], calls: [] };
  if (run.usage !== undefined) report.usage = { ...run.usage } as JsonValue;
  if (!run.success) {
    report.error = {
      code: run.errorCode ?? "SANDBOX_UNKNOWN",
      message: cutText(run.error ?? "", Math.min(PART_BYTES, Math.floor(budget / 4))),
      ...(run.guestError?.line === undefined ? {} : { line: run.guestError.line }),
      ...(run.guestError?.column === undefined ? {} : { column: run.guestError.column }),
    };
  }
  let left = budget - byteLength(stringify(report)) - 200; // room for `truncated`
  const cuts: string[] = [];

  if (run.success && run.result !== undefined) {
    // The value first, with half of what is left when logs or calls also want room.
    const others = run.logs.length + run.calls.length > 0;
    const share = Math.max(FLOOR_BYTES, others ? Math.floor(left / 2) : left);
    const rendered = renderJson(run.result, { maxBytes: share });
    report.result = rendered.json;
    left -= byteLength(rendered.text) + 10;
    if (rendered.truncated) cuts.push("the result (see its $cut tags)");
  }

  for (const { level, message } of run.logs) {
    const room = Math.min(PART_BYTES, left - 32);
    if (room < FLOOR_BYTES) break;
    const entry = { level, message: cutText(message, room) };
    left -= byteLength(stringify(entry)) + 1;
    report.logs.push(entry);
  }
  if (report.logs.length < run.logs.length)
    cuts.push(`${run.logs.length - report.logs.length} of ${run.logs.length} log lines`);

  for (const call of run.calls) {
    const room = Math.min(PART_BYTES, Math.floor((left - 128) / 2));
    if (room < FLOOR_BYTES) break;
    const entry: RunReportCall = {
      tool: cutText(call.tool, 256),
      status: call.status,
      ...(call.input === undefined ? {} : { input: renderJson(call.input, { maxBytes: room }).json }),
      ...(call.output === undefined ? {} : { output: renderJson(call.output, { maxBytes: room }).json }),
      ...(call.error === undefined
        ? {}
        : { error: { name: cutText(call.error.name, 256), message: cutText(call.error.message, room) } }),
      durationMs: call.durationMs,
    };
    left -= byteLength(stringify(entry)) + 1;
    report.calls.push(entry);
  }
  if (report.calls.length < run.calls.length)
    cuts.push(`${run.calls.length - report.calls.length} of ${run.calls.length} tool calls`);

  if (cuts.length > 0) {
    report.truncated = `cut to keep the response within ${maxBytes} bytes: ${cuts.join(", ")}`;
  }
  return report;
}

/** `text` cut to about `maxBytes` UTF-8 bytes, saying how many characters were cut. */
function cutText(text: string, maxBytes: number): string {
  const limit = Math.max(16, maxBytes);
  if (byteLength(text) <= limit) return text;
  const json = renderJson(text, { maxBytes: limit, maxStringLength: limit }).json;
  return typeof json === "string" ? json : text.slice(0, Math.floor(limit / 4));
}
