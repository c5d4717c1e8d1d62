import type { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { isSuaveplanError, withoutErrorCode } from "@suaveplan/sandbox-core/error-codes";
import type { ToolCrossingError } from "@suaveplan/sandbox-kernel";
import {
  createToolRunner,
  type NormalisedToolSet,
  normaliseTools,
  ToolCallError,
  type ToolCallRecord,
  type ToolSet,
} from "@suaveplan/sandbox-tools";
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
   * validation or the handler), then `inputSchema`, `needsApproval` (a call that needs approval
   * is denied: the plugin host has no approval hook), the handler, `outputSchema`. Resolves the
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
/** No per-call limits: the facade's maxToolCalls/maxConcurrentToolCalls/maxToolPayloadBytes do not apply here. */
const UNLIMITED = Number.MAX_SAFE_INTEGER;

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

/** A failed tool call as it crosses into the guest: only `name`, `tool`, `message` (and `code` for a sandbox refusal). */
export function toolCrossingError(error: unknown, tool: string): ToolCrossingError {
  if (error instanceof ToolCallError) return { name: "ToolError", tool: error.tool, message: error.message };
  if (isSuaveplanError(error)) return { code: error.code, name: "ToolError", tool, message: error.message };
  return { name: "ToolError", tool, message: `tool ${tool} failed` };
}

/**
 * Build the host end of the plugin's tools: sandbox-tools' runner (the facade's, in the same
 * order and wording) with the plugin's policy as its gate, no per-call limits, a journal of the
 * last {@link JOURNAL_SIZE} calls, and disposal worded for a sandbox. Throws
 * `SAND_VM_INVALID_OPTIONS` naming `options.tools.<name>…` when a tool is malformed.
 */
export function createVmToolHost(options: VmToolHostOptions): VmToolHost {
  const { checker } = options;
  let disposed = false;
  let inFlight = 0;
  let seq = 0;
  const runner = createToolRunner({
    tools: compileTools(options.tools),
    maxToolCalls: UNLIMITED,
    maxConcurrentToolCalls: UNLIMITED,
    maxToolPayloadBytes: UNLIMITED,
    // What crosses is bounded by the plugin's copy limit, checked as it is copied.
    measure: () => 0,
    maxJournal: JOURNAL_SIZE,
    maxMessageChars: MAX_MESSAGE_CHARS,
    noApproverHint: "the plugin host cannot ask for approval; give the plugin a tool without needsApproval",
    gate: (tool) => {
      if (disposed)
        return { status: "refused", message: `tool ${tool} was refused: the sandbox is disposed` };
      const decision = checker.checkTool(tool);
      if (decision.allowed) return undefined;
      return {
        status: "denied",
        message: `tool ${tool} was denied by the sandbox policy (${decision.reason}); list it in policy.tools to allow it`,
      };
    },
  });
  // A denial or a refusal after disposal carries its code into the guest.
  const codeOf = (error: ToolCallError): string | undefined =>
    error.status === "denied"
      ? "PERMISSION_DENIED"
      : error.status === "refused" && disposed
        ? SAND_VM_CODES.DISPOSED
        : undefined;

  return {
    names: runner.names,
    get inFlight() {
      return inFlight;
    },
    call(name, input) {
      const tool = String(name).slice(0, 128);
      inFlight++;
      return runner.call(name as string, input, `call_${++seq}`).then(
        (output) => {
          inFlight--;
          return output;
        },
        (error: unknown) => {
          inFlight--;
          const crossing = toolCrossingError(error, tool);
          const code = error instanceof ToolCallError ? codeOf(error) : undefined;
          throw code === undefined ? crossing : { code, ...crossing };
        },
      );
    },
    calls: () => runner.journal(),
    dispose() {
      if (disposed) return;
      disposed = true;
      runner.abortAll(
        new VmSandboxError(SAND_VM_CODES.DISPOSED, "the sandbox was disposed"),
        "the sandbox was disposed",
      );
    },
  };
}
