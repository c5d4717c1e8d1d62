import { type Context, context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { SANDBOX_METER_NAME, type ToolCallOutcome } from "./telemetry.js";

/** Name of the tracer every sandbox span is started on (the same name as the meter). */
export const SANDBOX_TRACER_NAME = SANDBOX_METER_NAME;

/**
 * The stable span names. A tool call's span is named `execute_tool <tool>`,
 * as the OpenTelemetry GenAI semantic conventions name tool execution spans.
 */
export const SANDBOX_SPAN_NAMES = Object.freeze({
  toolCall: "execute_tool",
  execution: "sandbox.execute",
} as const);

/**
 * The stable attribute keys of a tool call's span: the GenAI semantic
 * conventions' `gen_ai.operation.name` (`"execute_tool"`), `gen_ai.tool.name`,
 * `gen_ai.tool.call.id` and `gen_ai.tool.type` (`"function"`), plus
 * `sandbox.tool.outcome` (a {@link ToolCallOutcome}) and, unless the outcome
 * is `ok`, `error.type` (the outcome again) with the span status ERROR.
 */
export const TOOL_CALL_SPAN_ATTRIBUTES = Object.freeze({
  operation: "gen_ai.operation.name",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  outcome: "sandbox.tool.outcome",
  errorType: "error.type",
} as const);

/** One tool call's span, started by {@link startToolCallSpan}. */
export interface ToolCallSpan {
  /** Run `fn` with this span as the active span, so spans the tool's handler starts are its children. */
  run<T>(fn: () => T): T;
  /** End the span with the call's outcome; `message` becomes the ERROR status message. Idempotent. */
  end(outcome: ToolCallOutcome, message?: string): void;
}

/**
 * Start the span of one tool call, as a child of the span in `parent` (for
 * example the execution's span: `trace.setSpan(context.active(), span)`), or
 * of the active context when `parent` is not given. Goes through
 * `@opentelemetry/api` only: a no-op span when the application registered no
 * tracer provider.
 */
export function startToolCallSpan(tool: string, toolCallId: string, parent?: Context): ToolCallSpan {
  const parentContext = parent ?? context.active();
  const span = trace.getTracer(SANDBOX_TRACER_NAME).startSpan(
    `${SANDBOX_SPAN_NAMES.toolCall} ${tool}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        [TOOL_CALL_SPAN_ATTRIBUTES.operation]: SANDBOX_SPAN_NAMES.toolCall,
        [TOOL_CALL_SPAN_ATTRIBUTES.toolName]: tool,
        [TOOL_CALL_SPAN_ATTRIBUTES.toolCallId]: toolCallId,
        [TOOL_CALL_SPAN_ATTRIBUTES.toolType]: "function",
      },
    },
    parentContext,
  );
  const active = trace.setSpan(parentContext, span);
  let ended = false;
  return {
    run: (fn) => context.with(active, fn),
    end(outcome, message) {
      if (ended) return;
      ended = true;
      span.setAttribute(TOOL_CALL_SPAN_ATTRIBUTES.outcome, outcome);
      if (outcome !== "ok") {
        span.setAttribute(TOOL_CALL_SPAN_ATTRIBUTES.errorType, outcome);
        span.setStatus(
          message === undefined ? { code: SpanStatusCode.ERROR } : { code: SpanStatusCode.ERROR, message },
        );
      }
      span.end();
    },
  };
}

/** One execution's span, started by {@link startExecutionSpan}; tool-call spans are its children. */
export interface ExecutionSpan {
  /** The context carrying this span: pass it as the parent of tool-call spans. */
  readonly context: Context;
  /** End the span with the result's error code (or none on success). Idempotent. */
  end(errorCode: string | undefined, toolCalls: number): void;
}

/**
 * Start the span of one execution (`sandbox.execute`, attributes
 * `sandbox.engine`, then `sandbox.error_code` and `sandbox.tool_calls`), a
 * child of the active context. `@opentelemetry/api` only: a no-op when the
 * application registered no tracer provider.
 */
export function startExecutionSpan(engine: string): ExecutionSpan {
  const span = trace.getTracer(SANDBOX_TRACER_NAME).startSpan(SANDBOX_SPAN_NAMES.execution, {
    kind: SpanKind.INTERNAL,
    attributes: { "sandbox.engine": engine },
  });
  let ended = false;
  return {
    context: trace.setSpan(context.active(), span),
    end(errorCode, toolCalls) {
      if (ended) return;
      ended = true;
      span.setAttribute("sandbox.tool_calls", toolCalls);
      if (errorCode !== undefined) {
        span.setAttribute("sandbox.error_code", errorCode);
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode });
      }
      span.end();
    },
  };
}
