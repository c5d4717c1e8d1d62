import { performance } from "node:perf_hooks";
import type { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { isSuaveplanError, withoutErrorCode } from "@suaveplan/sandbox-core/error-codes";
import {
  recordToolCall,
  recordToolCallDuration,
  type ToolCallOutcome,
  UNKNOWN_TOOL_ATTRIBUTE,
} from "@suaveplan/sandbox-core/telemetry";
import type { ToolCrossingError } from "@suaveplan/sandbox-kernel";
import {
  describeIssues,
  type NormalisedTool,
  type NormalisedToolSet,
  normaliseTools,
  ToolCallError,
  type ToolCallRecord,
  type ToolCallStatus,
  type ToolExecutionOptions,
  type ToolSet,
} from "@suaveplan/sandbox-tools";
import { z } from "zod";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";

/** Options of {@link createVmToolHost}. */
export interface VmToolHostOptions {
  checker: PermissionChecker;
  /** The tools as the user wrote them (AI SDK `tool()` shape). */
  tools: ToolSet | undefined;
}

/** The host end of the plugin's `tools` global. */
export interface VmToolHost {
  /** Tool names, in definition order: the members of the guest's `tools`. */
  readonly names: readonly string[];
  /** Calls currently running (validation or handler). */
  readonly inFlight: number;
  /**
   * Run one guest call: the permission policy first (`policy.tools`; a denial is journaled as
   * `denied`, counted on `plugin.permission_denied_total{capability="tool"}` and never reaches
   * validation or the handler), then `inputSchema`, the handler, `outputSchema`. Resolves the
   * output; rejects only with a {@link ToolCrossingError}.
   */
  call(name: unknown, input: unknown): Promise<unknown>;
  /** The last {@link JOURNAL_SIZE} calls, in call order (copies): the facade's `ToolCallRecord`. */
  calls(): ToolCallRecord[];
  /** Abort every pending call's `abortSignal` (journaled `aborted`) and refuse later calls. Idempotent. */
  dispose(): void;
}

/** How many calls the journal keeps (the oldest are dropped first): a plugin host lives long. */
export const JOURNAL_SIZE = 1_000;
/** A handler's message is passed through to the guest, cut to this many characters. */
const MAX_MESSAGE_CHARS = 2_000;
interface MutableRecord {
  id: string;
  tool: string;
  input: unknown;
  output?: unknown;
  error?: { name: "ToolError"; tool: string; message: string };
  ok: boolean;
  status: ToolCallStatus;
  durationMs: number;
}

/**
 * The tools checked by sandbox-tools' `normaliseTools` (the facade's check: the same fields and
 * reasons), its refusal rethrown as this package's `SAND_VM_INVALID_OPTIONS`.
 */
function compileTools(tools: unknown): NormalisedToolSet {
  try {
    return normaliseTools(tools as ToolSet | undefined, "options");
  } catch (error) {
    if (!isSuaveplanError(error)) throw error;
    const field = typeof error.details?.field === "string" ? error.details.field : "options.tools";
    const message = withoutErrorCode(error.message);
    const reason = message.slice(message.indexOf(`${field}: `) + field.length + 2);
    throw new VmSandboxError(
      SAND_VM_CODES.INVALID_OPTIONS,
      `Invalid createVmSandbox options: ${field}: ${reason}`,
      {
        details: { field },
      },
    );
  }
}

/** The message of a thrown value (a string itself, or an object's string `message`); never its stack. */
function textOf(error: unknown): string | undefined {
  if (typeof error === "string") return error;
  if (typeof error !== "object" || error === null) return undefined;
  try {
    const { message } = error as { message?: unknown };
    return typeof message === "string" ? message : undefined;
  } catch {
    return undefined;
  }
}

/** A failed tool call as it crosses into the guest: only `name`, `tool`, `message` (and `code` for a sandbox refusal). */
export function toolCrossingError(error: unknown, tool: string): ToolCrossingError {
  if (error instanceof ToolCallError) return { name: "ToolError", tool: error.tool, message: error.message };
  if (isSuaveplanError(error)) return { code: error.code, name: "ToolError", tool, message: error.message };
  return { name: "ToolError", tool, message: `tool ${tool} failed` };
}

/**
 * Build the host end of the plugin's tools. Throws `SAND_VM_INVALID_OPTIONS` naming
 * `options.tools.<name>…` when a tool is malformed.
 */
export function createVmToolHost(options: VmToolHostOptions): VmToolHost {
  const { checker } = options;
  const tools = compileTools(options.tools);
  const { names } = tools;
  const journal: Array<{ record: MutableRecord; startedAt: number }> = [];
  const pending = new Map<MutableRecord, { controller: AbortController; startedAt: number }>();
  let seq = 0;
  let disposed = false;

  const finish = (
    record: MutableRecord,
    startedAt: number,
    status: ToolCallOutcome,
    value: unknown,
  ): void => {
    record.status = status;
    record.ok = status === "ok";
    record.durationMs = performance.now() - startedAt;
    if (status === "ok") record.output = value;
    else record.error = { name: "ToolError", tool: record.tool, message: String(value) };
    const metricTool = tools.get(record.tool) !== undefined ? record.tool : UNKNOWN_TOOL_ATTRIBUTE;
    recordToolCall(metricTool, status);
    recordToolCallDuration(metricTool, status, record.durationMs);
  };

  const run = async (
    record: MutableRecord,
    tool: NormalisedTool,
    controller: AbortController,
    startedAt: number,
  ): Promise<unknown> => {
    const name = record.tool;
    const fail = (status: Exclude<ToolCallOutcome, "ok">, message: string): never => {
      if (record.status === "pending") finish(record, startedAt, status, message);
      throw new ToolCallError(name, status, record.error?.message ?? message);
    };
    let parsed: z.ZodSafeParseResult<unknown>;
    try {
      parsed = await z.safeParseAsync(tool.inputSchema.validator, record.input);
    } catch (error) {
      return fail(
        "invalid",
        `tool ${name} could not check its input: ${textOf(error) ?? "the schema threw"}`,
      );
    }
    if (!parsed.success)
      return fail(
        "invalid",
        `tool ${name} got an invalid input: ${describeIssues(parsed.error.issues, "input")}`,
      );
    if (record.status !== "pending") return fail("aborted", "");
    let output: unknown;
    try {
      const execution: ToolExecutionOptions = Object.freeze({
        abortSignal: controller.signal,
        toolCallId: record.id,
        messages: Object.freeze([]) as unknown as unknown[],
        context: undefined,
      });
      output = await Reflect.apply(tool.execute, undefined, [parsed.data, execution]);
    } catch (error) {
      const text = textOf(error) || `tool ${name} failed`;
      return fail(
        "error",
        text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text,
      );
    }
    if (record.status !== "pending") return fail("aborted", "");
    if (tool.outputSchema !== undefined) {
      let checked: z.ZodSafeParseResult<unknown>;
      try {
        checked = await z.safeParseAsync(tool.outputSchema.validator, output);
      } catch (error) {
        return fail(
          "invalid-output",
          `tool ${name} could not check its output: ${textOf(error) ?? "the schema threw"}`,
        );
      }
      if (!checked.success) {
        return fail(
          "invalid-output",
          `tool ${name} returned an invalid output: ${describeIssues(checked.error.issues, "output")}`,
        );
      }
      output = checked.data;
    }
    if (record.status !== "pending") return fail("aborted", "");
    finish(record, startedAt, "ok", output);
    return output;
  };

  return {
    names,
    get inFlight() {
      return pending.size;
    },
    call(name, input) {
      const tool = typeof name === "string" ? name.slice(0, 128) : String(name).slice(0, 128);
      const record: MutableRecord = {
        id: `call_${++seq}`,
        tool,
        input,
        ok: false,
        status: "pending",
        durationMs: 0,
      };
      const startedAt = performance.now();
      journal.push({ record, startedAt });
      if (journal.length > JOURNAL_SIZE) journal.shift();
      if (disposed) {
        const message = `tool ${tool} was refused: the sandbox is disposed`;
        finish(record, startedAt, "refused", message);
        return Promise.reject({ code: SAND_VM_CODES.DISPOSED, name: "ToolError", tool, message });
      }
      const decision = checker.checkTool(tool);
      if (!decision.allowed) {
        const message = `tool ${tool} was denied by the sandbox policy (${decision.reason}); list it in policy.tools to allow it`;
        finish(record, startedAt, "denied", message);
        return Promise.reject({ code: "PERMISSION_DENIED", name: "ToolError", tool, message });
      }
      const compiled = tools.get(tool);
      if (compiled === undefined) {
        const message = `there is no tool named ${JSON.stringify(tool)}`;
        finish(record, startedAt, "refused", message);
        return Promise.reject(toolCrossingError(new ToolCallError(tool, "refused", message), tool));
      }
      const controller = new AbortController();
      pending.set(record, { controller, startedAt });
      return run(record, compiled, controller, startedAt).then(
        (output) => {
          pending.delete(record);
          return output;
        },
        (error: unknown) => {
          pending.delete(record);
          throw toolCrossingError(error, tool);
        },
      );
    },
    calls() {
      const now = performance.now();
      return journal.map(({ record, startedAt }) =>
        record.status === "pending" ? { ...record, durationMs: now - startedAt } : { ...record },
      );
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      const reason = new VmSandboxError(SAND_VM_CODES.DISPOSED, "the sandbox was disposed");
      for (const [record, { controller, startedAt }] of [...pending]) {
        finish(record, startedAt, "aborted", `tool ${record.tool} was aborted: the sandbox was disposed`);
        controller.abort(reason);
      }
      pending.clear();
    },
  };
}
