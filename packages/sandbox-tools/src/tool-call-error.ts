import type { ToolCallOutcome } from "@suaveplan/sandbox-core/telemetry";

/** A failed tool call as plain data: what the guest's `ToolError` carries and what the journal records. */
export interface ToolCallErrorInfo {
  readonly name: "ToolError";
  /** The tool the guest called. */
  readonly tool: string;
  /** What happened; for a handler that threw, its message as it is. */
  readonly message: string;
}

/**
 * How the tool runner rejects a failed call. Only `name` (`"ToolError"`),
 * `message` and `tool` are meant to cross into the guest (see {@link toJSON});
 * its `stack` is just the first line, so no transport can leak host frames.
 */
export class ToolCallError extends Error {
  override readonly name = "ToolError";
  /** The tool the guest called. */
  readonly tool: string;
  /** How the call ended (never `ok`). */
  readonly status: Exclude<ToolCallOutcome, "ok">;

  constructor(tool: string, status: Exclude<ToolCallOutcome, "ok">, message: string) {
    super(message);
    this.tool = tool;
    this.status = status;
    Object.defineProperty(this, "stack", {
      value: `ToolError: ${message}`,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  /** `{ name: "ToolError", tool, message }`: what the guest's error is built from. */
  toJSON(): ToolCallErrorInfo {
    return { name: this.name, tool: this.tool, message: this.message };
  }
}
