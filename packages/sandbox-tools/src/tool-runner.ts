import { performance } from "node:perf_hooks";
import type { Context } from "@opentelemetry/api";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import {
  recordToolCall,
  recordToolCallDuration,
  startToolCallSpan,
  type ToolCallOutcome,
  type ToolCallSpan,
  UNKNOWN_TOOL_ATTRIBUTE,
} from "@suaveplan/sandbox-core/telemetry";
import type { Clock } from "@suaveplan/sandbox-core/types";
import { z } from "zod";
import { describeIssues } from "./internal/describe-issues.js";
import { estimateBytes } from "./internal/estimate-bytes.js";
import {
  isNormalisedToolSet,
  type NormalisedTool,
  type NormalisedToolSet,
  normaliseTools,
} from "./normalise-tools.js";
import { ToolCallError, type ToolCallErrorInfo } from "./tool-call-error.js";
import type { ToolExecutionOptions, ToolSet } from "./tool-definition.js";
import { type ResolvedToolLimits, resolveToolLimits, type ToolLimits } from "./tool-limits.js";

const { apply } = Reflect;

/** Where a call is in its life: a final {@link ToolCallOutcome}, or `pending` while it runs. */
export type ToolCallStatus = ToolCallOutcome | "pending";

/** One tool call in the journal (`r.calls`), as plain data. */
export interface ToolCallRecord {
  /** The call's id (the handler's `toolCallId`). */
  readonly id: string;
  /** The tool the guest called (cut to 128 characters). */
  readonly tool: string;
  /** What the guest sent; `undefined` when it was over `maxToolPayloadBytes` or could not be measured. */
  readonly input: unknown;
  /** What the guest received (after `outputSchema`), when `ok`. */
  readonly output?: unknown;
  /** What the guest's `ToolError` says, when the call failed. */
  readonly error?: ToolCallErrorInfo;
  /** `status === "ok"`. */
  readonly ok: boolean;
  readonly status: ToolCallStatus;
  /** From the guest's call to its answer (validation, approval, waiting for a slot, the handler), in ms. */
  readonly durationMs: number;
}

/** What an approval hook is asked about: a call whose input passed `inputSchema`. */
export interface ToolApprovalRequest {
  readonly tool: string;
  /** The input as `inputSchema` parsed it. */
  readonly input: unknown;
  readonly toolCallId: string;
  /** Aborted when the execution ends before the hook answers (dismiss a pending prompt). */
  readonly abortSignal: AbortSignal;
  /**
   * `true` when the tool's own `needsApproval` (the AI SDK's) asked for this
   * call to be approved: put it before a human. `false` for other calls, which
   * a hook is asked about too (it may still deny them).
   */
  readonly needsApproval: boolean;
}

/**
 * Decides whether one tool call may run (the human-in-the-loop seam). Only
 * `true` approves; anything else, a rejection or a throw denies. Every hook
 * is asked about every call; a call whose tool's `needsApproval` asks for
 * approval is refused (`denied`) when no hook is configured.
 */
export type ApproveToolCall = (call: ToolApprovalRequest) => boolean | Promise<boolean>;

/**
 * What a {@link ToolRunnerOptions.gate} answers to end a call before its
 * tool is looked up: `denied` (a policy said no) or `refused`; `message` is
 * the guest's `ToolError` message and the journal's.
 */
export interface ToolGateRefusal {
  readonly status: "denied" | "refused";
  readonly message: string;
}

/** Options of {@link createToolRunner}; the limits are per execution. */
export interface ToolRunnerOptions extends ToolLimits {
  /** The tools of this execution: sandbox-level and per-execution tools merged with {@link mergeTools}. */
  tools: NormalisedToolSet | ToolSet | undefined;
  /** Every hook given must approve a call (sandbox-level and per-execution); `undefined` entries are skipped. */
  approveToolCall?: ApproveToolCall | ReadonlyArray<ApproveToolCall | undefined> | undefined;
  /** The execution's signal: when it aborts, pending calls are aborted and later ones refused. */
  signal?: AbortSignal | undefined;
  /** The OpenTelemetry context whose span parents each call's span (the execution's); default the active one. */
  parentContext?: Context | undefined;
  /**
   * Size of an input or output, in bytes, checked against `maxToolPayloadBytes`.
   * The default counts the UTF-8 bytes of the value's codec text (what
   * crosses the boundary; see `maxToolPayloadBytes`). A throw means the value
   * cannot cross: the call fails (`invalid`/`invalid-output`) with the thrown
   * message.
   */
  measure?: ((value: unknown) => number) | undefined;
  /** Milliseconds for `durationMs`; default `performance.now`. */
  clock?: Clock | undefined;
  /**
   * A host's own check of each call, by tool name, after `maxToolCalls` and
   * before the tool is looked up (the plugin host's `policy.tools`). A
   * {@link ToolGateRefusal} ends the call there, journaled with its input;
   * `undefined` lets it go on. Must not throw (a throw ends the call
   * `refused`).
   */
  gate?: ((tool: string) => ToolGateRefusal | undefined) | undefined;
  /**
   * Keep only the last this many calls in the journal, dropping the oldest
   * first: for a host that lives long (a duplicate call id is then checked
   * among the kept calls only). Default: every journaled call.
   */
  maxJournal?: number | undefined;
  /** A handler's thrown message reaches the guest cut to this many characters. Default half of `maxToolPayloadBytes`. */
  maxMessageChars?: number | undefined;
  /**
   * How the denial of a `needsApproval` call ends when no `approveToolCall`
   * hook is configured: the text after `it needs approval (needsApproval) and `.
   * Default: `no approveToolCall hook is configured; the host must pass approveToolCall to createSandbox() or execute()`.
   */
  noApproverHint?: string | undefined;
}

/** What one execution's tool calls used. */
export interface ToolUsage {
  /** Every call the guest made, refused ones included. */
  readonly calls: number;
  /** Measured bytes of the inputs that were accepted for validation. */
  readonly inputBytes: number;
  /** Measured bytes of the outputs sent back. */
  readonly outputBytes: number;
}

/**
 * The host side of one execution's tool calls: what an engine's `hostCalls`
 * calls for each guest `tools.<name>(input)`. Structurally a `HostCalls`.
 */
export interface ToolRunner {
  /** The tool names, in definition order: what the guest's frozen `tools` global offers. */
  readonly names: readonly string[];
  /**
   * The transport's bound on one call's codec text, in the codec's own unit
   * (UTF-16 code units × 2): twice `maxToolPayloadBytes`, so every input of at
   * most `maxToolPayloadBytes` UTF-8 bytes fits and this runner, not the
   * transport, decides. A guest whose input is past even this bound sends
   * {@link TOOL_INPUT_TOO_LARGE} instead, so the refusal is still journaled.
   */
  readonly maxCallBytes: number;
  /** The same bound for the reply's codec text; the runner refuses larger outputs first (`limit`). */
  readonly maxReplyBytes: number;
  /**
   * Run one call: resolves with the output to copy into the guest, or rejects
   * with a {@link ToolCallError} (only its `name`, `tool` and `message` may
   * reach the guest). Never rejects with anything else.
   */
  call(name: string, input: unknown, id: string): Promise<unknown>;
  /** Every call so far, in call order (copies). */
  journal(): ToolCallRecord[];
  /** Calls and bytes so far. */
  usage(): ToolUsage;
  /**
   * Abort every pending call's `abortSignal` with `reason`; they reject
   * (`aborted`) now and their late answers are dropped. Their message ends
   * with `why`, by default `reason`'s message or `the execution ended`.
   */
  abortAll(reason?: unknown, why?: string): void;
  /** Abort what is pending and refuse every later call (`refused`). Idempotent. */
  close(): void;
  /** {@link close}. */
  [Symbol.dispose](): void;
}

interface MutableRecord {
  id: string;
  tool: string;
  input: unknown;
  output?: unknown;
  error?: ToolCallErrorInfo;
  ok: boolean;
  status: ToolCallStatus;
  durationMs: number;
}

interface Entry {
  readonly tool: string;
  readonly metricTool: string;
  readonly toolCallId: string;
  readonly record: MutableRecord | undefined;
  readonly startedAt: number;
  readonly controller: AbortController;
  readonly span: ToolCallSpan;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: ToolCallError) => void;
  done: boolean;
}

type Measured = { ok: true; bytes: number } | { ok: false; message: string };

/** Frozen: a tool cannot push into the (shared) empty history. */
const NO_MESSAGES = Object.freeze([]) as unknown as unknown[];

/**
 * The input a transport hands to {@link ToolRunner.call} when the guest's
 * input was too large to send at all: the call is refused (`limit`) and
 * journaled like any oversized input. A registered symbol, so no codec text
 * can decode to it.
 */
export const TOOL_INPUT_TOO_LARGE: unique symbol = Symbol.for(
  "suaveplan.sandbox.tool-input-too-large",
) as never;
const NO_SPAN: ToolCallSpan = Object.freeze({ run: <T>(fn: () => T): T => fn(), end() {} });
const MAX_TOOL_NAME = 128;

/**
 * Create the tool runner of one execution. Each call goes through, in order:
 * the end of the execution (`refused`), `maxToolCalls` (`limit`; every call
 * counts, whatever its outcome), the tool's existence (`refused`), the input's
 * size (`limit`), `inputSchema` (`invalid`, handler not called), every
 * `approveToolCall` hook (`denied`, handler not called), a free slot of
 * `maxConcurrentToolCalls` (calls past it wait in call order; they are not
 * refused), the handler (`error` when it throws: its message is passed
 * through), `outputSchema` (`invalid-output`) and the output's size
 * (`limit`). Each call is journaled (up to the first one past `maxToolCalls`;
 * later refusals are only counted in {@link ToolRunner.usage}), counted on
 * `sandbox_tool_calls_total` and `sandbox_tool_call_duration_ms`, and traced
 * as an `execute_tool <name>` span under `parentContext`.
 *
 * Throws `SANDBOX_INVALID_OPTIONS` naming the option when an option is wrong.
 */
export function createToolRunner(options: ToolRunnerOptions): ToolRunner {
  const { tools, limits, approvers, measure, clock, parentContext, signal, gate, maxJournal } =
    checkOptions(options);
  const maxBytes = limits.maxToolPayloadBytes;
  // A handler's message is passed through, by default no longer than a payload may be.
  const maxMessageChars = options.maxMessageChars ?? Math.floor(maxBytes / 2);
  const noApproverHint =
    options.noApproverHint ??
    "no approveToolCall hook is configured; the host must pass approveToolCall to createSandbox() or execute()";
  const records: Array<{ record: MutableRecord; startedAt: number }> = [];
  const ids = new Set<string>();
  const pending = new Set<Entry>();
  const waiting: Array<() => void> = [];
  let running = 0;
  let calls = 0;
  let inputBytes = 0;
  let outputBytes = 0;
  let closed = false;

  const measureSafely = (value: unknown): Measured => {
    try {
      const bytes = measure(value);
      return typeof bytes === "number" && bytes >= 0
        ? { ok: true, bytes }
        : { ok: false, message: "its size could not be measured" };
    } catch (error) {
      return { ok: false, message: textOf(error) ?? "its size could not be measured" };
    }
  };

  const settle = (entry: Entry, status: ToolCallOutcome, output: unknown, message = ""): void => {
    if (entry.done) return;
    entry.done = true;
    pending.delete(entry);
    const durationMs = clock() - entry.startedAt;
    const { record } = entry;
    if (record !== undefined) {
      record.status = status;
      record.ok = status === "ok";
      record.durationMs = durationMs;
      if (status === "ok") record.output = output;
      else record.error = { name: "ToolError", tool: entry.tool, message };
    }
    recordToolCall(entry.metricTool, status);
    recordToolCallDuration(entry.metricTool, status, durationMs);
    if (status === "ok") {
      entry.span.end(status);
      entry.resolve(output);
    } else {
      entry.span.end(status, message);
      entry.reject(new ToolCallError(entry.tool, status, message));
    }
  };

  const acquireSlot = (): Promise<void> | undefined => {
    if (running < limits.maxConcurrentToolCalls) {
      running++;
      return undefined;
    }
    return new Promise<void>((resolve) => waiting.push(resolve));
  };

  const releaseSlot = (): void => {
    const next = waiting.shift();
    if (next === undefined) running--;
    else next();
  };

  const run = async (entry: Entry, tool: NormalisedTool, input: unknown): Promise<void> => {
    const { tool: name, toolCallId } = entry;
    const abortSignal = entry.controller.signal;
    let parsed: z.ZodSafeParseResult<unknown>;
    try {
      parsed = await z.safeParseAsync(tool.inputSchema.validator, input);
    } catch (error) {
      settle(
        entry,
        "invalid",
        undefined,
        `tool ${name} could not check its input: ${textOf(error) ?? "the schema threw"}`,
      );
      return;
    }
    if (entry.done) return;
    if (!parsed.success) {
      settle(
        entry,
        "invalid",
        undefined,
        `tool ${name} got an invalid input: ${describeIssues(parsed.error.issues, "input")}`,
      );
      return;
    }
    const value = parsed.data;

    // The AI SDK's needsApproval: fail closed on a throw, a non-boolean or a missing hook.
    let needsApproval: boolean;
    if (typeof tool.needsApproval === "boolean") needsApproval = tool.needsApproval;
    else {
      let answer: unknown;
      try {
        answer = await apply(tool.needsApproval, undefined, [
          value,
          Object.freeze({ toolCallId, messages: NO_MESSAGES, context: undefined }),
        ]);
      } catch (error) {
        const why = cut(textOf(error) ?? "it threw", maxMessageChars);
        settle(
          entry,
          "denied",
          undefined,
          `tool ${name} was denied: its needsApproval function threw: ${why}`,
        );
        return;
      }
      if (entry.done) return;
      if (typeof answer !== "boolean") {
        settle(
          entry,
          "denied",
          undefined,
          `tool ${name} was denied: its needsApproval function returned ${describeKind(answer)}, not a boolean`,
        );
        return;
      }
      needsApproval = answer;
    }
    if (needsApproval && approvers.length === 0) {
      settle(
        entry,
        "denied",
        undefined,
        `tool ${name} was denied: it needs approval (needsApproval) and ${noApproverHint}`,
      );
      return;
    }

    for (const approve of approvers) {
      let approved = false;
      try {
        approved =
          (await approve(
            Object.freeze({ tool: name, input: value, toolCallId, abortSignal, needsApproval }),
          )) === true;
      } catch {
        approved = false;
      }
      if (entry.done) return;
      if (!approved) {
        settle(entry, "denied", undefined, `tool ${name} was denied`);
        return;
      }
    }

    await acquireSlot();
    let output: unknown;
    try {
      if (entry.done) return;
      const execution: ToolExecutionOptions = Object.freeze({
        abortSignal,
        toolCallId,
        messages: NO_MESSAGES,
        context: undefined,
      });
      const result = entry.span.run(() => apply(tool.execute, undefined, [value, execution]));
      output = isAsyncIterable(result) ? await lastValue(result, abortSignal) : await result;
    } catch (error) {
      settle(entry, "error", undefined, cut(textOf(error) || `tool ${name} failed`, maxMessageChars));
      return;
    } finally {
      releaseSlot();
    }
    if (entry.done) return;

    if (tool.outputSchema !== undefined) {
      let checked: z.ZodSafeParseResult<unknown>;
      try {
        checked = await z.safeParseAsync(tool.outputSchema.validator, output);
      } catch (error) {
        settle(
          entry,
          "invalid-output",
          undefined,
          `tool ${name} could not check its output: ${textOf(error) ?? "the schema threw"}`,
        );
        return;
      }
      if (entry.done) return;
      if (!checked.success) {
        settle(
          entry,
          "invalid-output",
          undefined,
          `tool ${name} returned an invalid output: ${describeIssues(checked.error.issues, "output")}`,
        );
        return;
      }
      output = checked.data;
    }
    const size = measureSafely(output);
    if (!size.ok) {
      settle(
        entry,
        "invalid-output",
        undefined,
        `tool ${name} returned an output that cannot be sent into the sandbox: ${size.message}`,
      );
      return;
    }
    if (size.bytes > maxBytes) {
      settle(
        entry,
        "limit",
        undefined,
        `tool ${name} returned an output larger than ${maxBytes} bytes (maxToolPayloadBytes)`,
      );
      return;
    }
    outputBytes += size.bytes;
    settle(entry, "ok", output);
  };

  const abortAll = (reason?: unknown, why = textOf(reason) ?? "the execution ended"): void => {
    for (const entry of [...pending]) {
      entry.controller.abort(reason);
      settle(entry, "aborted", undefined, `tool ${entry.tool} was aborted: ${why}`);
    }
  };

  const onAbort = (): void => {
    abortAll(signal?.reason);
    close();
  };

  const close = (): void => {
    if (closed) return;
    closed = true;
    signal?.removeEventListener("abort", onAbort);
    abortAll();
  };

  if (signal?.aborted) closed = true;
  else signal?.addEventListener("abort", onAbort, { once: true });

  const gateSafely = (name: string): ToolGateRefusal | undefined => {
    if (gate === undefined) return undefined;
    try {
      const answer = gate(name);
      if (answer === undefined) return undefined;
      const status = answer.status === "denied" ? "denied" : "refused";
      return { status, message: String(answer.message) };
    } catch {
      return { status: "refused", message: `tool ${name} was refused: its gate failed` };
    }
  };

  const start = (
    name: string,
    input: unknown,
    id: string,
    resolve: (value: unknown) => void,
    reject: (error: ToolCallError) => void,
  ): void => {
    calls++;
    const shownName = cut(String(name), MAX_TOOL_NAME);
    const tool = typeof name === "string" ? tools.get(name) : undefined;
    const metricTool = tool === undefined ? UNKNOWN_TOOL_ATTRIBUTE : shownName;
    const toolCallId = String(id);
    const journaled = calls <= limits.maxToolCalls + 1;
    const startedAt = clock();
    const record: MutableRecord | undefined = journaled
      ? { id: toolCallId, tool: shownName, input: undefined, ok: false, status: "pending", durationMs: 0 }
      : undefined;
    const entry: Entry = {
      tool: shownName,
      metricTool,
      toolCallId,
      record,
      startedAt,
      controller: new AbortController(),
      span: journaled ? startToolCallSpan(metricTool, toolCallId, parentContext) : NO_SPAN,
      resolve,
      reject,
      done: false,
    };
    pending.add(entry);
    const duplicate = journaled && ids.has(toolCallId);
    if (journaled) ids.add(toolCallId);
    const tooLarge = input === TOOL_INPUT_TOO_LARGE;
    const size: Measured | undefined = !journaled
      ? undefined
      : tooLarge
        ? { ok: true, bytes: Number.POSITIVE_INFINITY }
        : measureSafely(input);
    if (record !== undefined) {
      records.push({ record, startedAt });
      if (records.length > maxJournal) ids.delete((records.shift() as { record: MutableRecord }).record.id);
      if (size?.ok && size.bytes <= maxBytes) record.input = input;
    }
    const refusal = closed || calls > limits.maxToolCalls ? undefined : gateSafely(shownName);

    if (closed) {
      settle(entry, "refused", undefined, `tool ${shownName} was refused: the execution has ended`);
    } else if (calls > limits.maxToolCalls) {
      const why = `an execution may make ${limits.maxToolCalls} tool calls (maxToolCalls)`;
      settle(entry, "limit", undefined, `tool ${shownName} was refused: ${why}`);
    } else if (refusal !== undefined) {
      settle(entry, refusal.status, undefined, refusal.message);
    } else if (tool === undefined) {
      settle(entry, "refused", undefined, `there is no tool named ${JSON.stringify(shownName)}`);
    } else if (duplicate) {
      settle(
        entry,
        "refused",
        undefined,
        `tool ${shownName} was refused: call id ${toolCallId} is already in use`,
      );
    } else if (size === undefined || !size.ok) {
      const why = size?.ok === false ? size.message : "its size could not be measured";
      settle(entry, "invalid", undefined, `tool ${shownName} got an input that cannot be used: ${why}`);
    } else if (size.bytes > maxBytes) {
      const why = `its input is larger than ${maxBytes} bytes (maxToolPayloadBytes)`;
      settle(entry, "limit", undefined, `tool ${shownName} was refused: ${why}`);
    } else {
      inputBytes += size.bytes;
      run(entry, tool, input).catch(() => settle(entry, "error", undefined, `tool ${shownName} failed`));
    }
  };

  return Object.freeze({
    names: tools.names,
    maxCallBytes: maxBytes * 2,
    maxReplyBytes: maxBytes * 2,
    call: (name: string, input: unknown, id: string): Promise<unknown> =>
      new Promise<unknown>((resolve, reject) => start(name, input, id, resolve, reject)),
    journal: (): ToolCallRecord[] => {
      const now = clock();
      return records.map(({ record, startedAt }) =>
        record.status === "pending" ? { ...record, durationMs: now - startedAt } : { ...record },
      );
    },
    usage: (): ToolUsage => ({ calls, inputBytes, outputBytes }),
    abortAll,
    close,
    [Symbol.dispose]: close,
  });
}

interface CheckedOptions {
  tools: NormalisedToolSet;
  limits: ResolvedToolLimits;
  approvers: readonly ApproveToolCall[];
  measure: (value: unknown) => number;
  clock: Clock;
  parentContext: Context | undefined;
  signal: AbortSignal | undefined;
  gate: ((tool: string) => ToolGateRefusal | undefined) | undefined;
  maxJournal: number;
}

function checkOptions(options: ToolRunnerOptions): CheckedOptions {
  const fail = (field: string, message: string): never => {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      `Invalid execution options: options.${field}: ${message}`,
      {
        details: { field: `options.${field}` },
      },
    );
  };
  if (typeof options !== "object" || options === null) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid execution options: the tool runner needs an options object",
    );
  }
  const tools = isNormalisedToolSet(options.tools) ? options.tools : normaliseTools(options.tools, "options");
  const limits = resolveToolLimits(options, "options");
  const { approveToolCall, measure, clock, signal, parentContext, gate, maxJournal, maxMessageChars } =
    options;
  const approvers: ApproveToolCall[] = [];
  if (typeof approveToolCall === "function") approvers.push(approveToolCall);
  else if (Array.isArray(approveToolCall)) {
    for (const hook of approveToolCall as ReadonlyArray<unknown>) {
      if (hook === undefined) continue;
      if (typeof hook !== "function") fail("approveToolCall", "must be a function or an array of functions");
      approvers.push(hook as ApproveToolCall);
    }
  } else if (approveToolCall !== undefined)
    fail("approveToolCall", "must be a function or an array of functions");
  if (measure !== undefined && typeof measure !== "function")
    fail("measure", "must be a function (value) => bytes");
  if (clock !== undefined && typeof clock !== "function") fail("clock", "must be a function returning ms");
  if (signal !== undefined && !(signal instanceof AbortSignal)) fail("signal", "must be an AbortSignal");
  if (parentContext !== undefined && (typeof parentContext !== "object" || parentContext === null)) {
    fail("parentContext", "must be an OpenTelemetry Context");
  }
  if (gate !== undefined && typeof gate !== "function")
    fail("gate", "must be a function (tool) => refusal or undefined");
  const count = (field: string, value: unknown, least: number): void => {
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= least))
      fail(field, `must be an integer of at least ${least}, got ${String(value)}`);
  };
  count("maxJournal", maxJournal, 0);
  count("maxMessageChars", maxMessageChars, 2);
  if (options.noApproverHint !== undefined && typeof options.noApproverHint !== "string")
    fail("noApproverHint", "must be a string");
  const limit = limits.maxToolPayloadBytes;
  return {
    tools,
    limits,
    approvers,
    measure: measure ?? ((value) => estimateBytes(value, limit)),
    clock: clock ?? (() => performance.now()),
    parentContext,
    signal,
    gate,
    maxJournal: maxJournal ?? Number.POSITIVE_INFINITY,
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
}

/**
 * The last value an async generator `execute` yields (the AI SDK's
 * preliminary results end with the final one), `undefined` if none. When
 * `signal` aborts, the iterator's `return()` is called so the generator's
 * `finally` runs and it stops.
 */
async function lastValue(iterable: AsyncIterable<unknown>, signal: AbortSignal): Promise<unknown> {
  const iterator = iterable[Symbol.asyncIterator]();
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    if (typeof iterator.return === "function") {
      Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => {});
    }
  };
  signal.addEventListener("abort", stop, { once: true });
  try {
    let last: unknown;
    while (!signal.aborted) {
      const step = await iterator.next();
      if (step.done) break;
      last = step.value;
    }
    if (signal.aborted) stop();
    return last;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

function describeKind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object"
    ? "an object"
    : typeof value === "undefined"
      ? "undefined"
      : `a ${typeof value}`;
}

/** The text of a thrown value: a string itself, or an object's string `message`; never its stack. */
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

/** `text` cut to at most `maxChars` characters. */
function cut(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, Math.max(0, maxChars - 1))}…` : text;
}
