import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { SandboxRunResult } from "@suaveplan/sandbox";
import { type RunReport, renderRunReport } from "@suaveplan/sandbox-core/render";

const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");
const stringify = JSON.stringify;

/**
 * `run_javascript`'s result: `structuredContent` (JSON matching the tool's
 * outputSchema) and, as the MCP spec asks of a tool with an outputSchema, its
 * serialisation as the one text block. The whole response — both copies, with
 * the escaping the text copy needs — stays within `maxBytes`
 * (`renderRunReport`, shared with the AI SDK code tool, does the cutting).
 * `normalised` lists what was changed in the model's code before it ran.
 */
export function javascriptResult(
  run: SandboxRunResult,
  maxBytes: number,
  normalised: readonly string[] = [],
): CallToolResult {
  const measure = (report: RunReport): number => {
    const text = stringify(report);
    return byteLength(text) + byteLength(stringify(text));
  };
  const structured = renderRunReport(run, {
    maxBytes,
    copies: 2,
    measure,
    ...(normalised.length === 0 ? {} : { head: { normalised: [...normalised] } }),
  });
  return {
    content: [{ type: "text", text: stringify(structured) }],
    structuredContent: structured,
    ...(run.success ? {} : { isError: true }),
  };
}
