import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { SandboxRunResult } from "@suaveplan/sandbox";
import { type JsonValue, renderJson } from "@suaveplan/sandbox-core/render";

const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");
const stringify = JSON.stringify;

/** The least a part is given when it is shown at all, in bytes. */
const FLOOR_BYTES = 256;
/** Bytes of one log line, error message or tool call's input or output at most. */
const PART_BYTES = 8_192;

/**
 * `run_javascript`'s result: `structuredContent` (JSON matching the tool's
 * outputSchema) and, as the MCP spec asks of a tool with an outputSchema, its
 * serialisation as the one text block. The whole response — both copies, with
 * the escaping the text copy needs — stays within `maxBytes`: the completion
 * value is rendered with a budget (`$cut` tags where it was cut), log lines and
 * tool calls are kept in order while they fit, and `truncated` says what was
 * left out. Never walks more than the renderer's node budget, whatever the graph.
 */
export function javascriptResult(run: SandboxRunResult, maxBytes: number): CallToolResult {
  // Each copy gets about half; the text copy's escaping is measured, and the budget halved until it fits.
  let budget = Math.floor(maxBytes / 2);
  for (;;) {
    const structured = boundedStructure(run, budget, maxBytes);
    const text = stringify(structured);
    const size = byteLength(text) + byteLength(stringify(text));
    if (size <= maxBytes || budget <= FLOOR_BYTES * 2) {
      return {
        content: [{ type: "text", text }],
        structuredContent: structured,
        ...(run.success ? {} : { isError: true }),
      };
    }
    budget = Math.floor((budget * maxBytes) / size) - 64;
  }
}

function boundedStructure(run: SandboxRunResult, budget: number, maxBytes: number): Record<string, unknown> {
  const structured: Record<string, unknown> = { success: run.success, logs: [], calls: [] };
  if (run.usage !== undefined) structured.usage = { ...run.usage };
  if (!run.success) {
    structured.error = {
      code: run.errorCode,
      message: cutText(run.error, Math.min(PART_BYTES, Math.floor(budget / 4))),
      ...(run.guestError?.line === undefined ? {} : { line: run.guestError.line }),
      ...(run.guestError?.column === undefined ? {} : { column: run.guestError.column }),
    };
  }
  let left = budget - byteLength(stringify(structured)) - 200; // room for `truncated`
  const cuts: string[] = [];

  if (run.success && run.result !== undefined) {
    // The value first, with half of what is left when logs or calls also want room.
    const others = run.logs.length + run.calls.length > 0;
    const share = Math.max(FLOOR_BYTES, others ? Math.floor(left / 2) : left);
    const rendered = renderJson(run.result, { maxBytes: share });
    structured.result = rendered.json;
    left -= byteLength(rendered.text) + 10;
    if (rendered.truncated) cuts.push("the result (see its $cut tags)");
  }

  const logs: Array<{ level: string; message: string }> = [];
  for (const { level, message } of run.logs) {
    const room = Math.min(PART_BYTES, left - 32);
    if (room < FLOOR_BYTES) break;
    const entry = { level, message: cutText(message, room) };
    left -= byteLength(stringify(entry)) + 1;
    logs.push(entry);
  }
  structured.logs = logs;
  if (logs.length < run.logs.length)
    cuts.push(`${run.logs.length - logs.length} of ${run.logs.length} log lines`);

  const calls: Record<string, unknown>[] = [];
  for (const call of run.calls) {
    const room = Math.min(PART_BYTES, Math.floor((left - 128) / 2));
    if (room < FLOOR_BYTES) break;
    const entry: Record<string, unknown> = { tool: cutText(call.tool, 256), status: call.status };
    if (call.input !== undefined) entry.input = renderJson(call.input, { maxBytes: room }).json as JsonValue;
    if (call.output !== undefined)
      entry.output = renderJson(call.output, { maxBytes: room }).json as JsonValue;
    if (call.error !== undefined) {
      entry.error = { name: cutText(call.error.name, 256), message: cutText(call.error.message, room) };
    }
    entry.durationMs = call.durationMs;
    left -= byteLength(stringify(entry)) + 1;
    calls.push(entry);
  }
  structured.calls = calls;
  if (calls.length < run.calls.length)
    cuts.push(`${run.calls.length - calls.length} of ${run.calls.length} tool calls`);

  if (cuts.length > 0) {
    structured.truncated = `cut to keep the response within ${maxBytes} bytes: ${cuts.join(", ")}`;
  }
  return structured;
}

/** `text` cut to about `maxBytes` UTF-8 bytes, saying how many characters were cut. */
function cutText(text: string, maxBytes: number): string {
  const limit = Math.max(16, maxBytes);
  if (byteLength(text) <= limit) return text;
  const json = renderJson(text, { maxBytes: limit, maxStringLength: limit }).json;
  return typeof json === "string" ? json : text.slice(0, Math.floor(limit / 4));
}
