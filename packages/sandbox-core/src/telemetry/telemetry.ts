import {
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
} from "@opentelemetry/api";
import type { SandboxCode } from "../error-codes/sandbox-codes.js";
import type { EngineName, SandboxResult } from "../types/sandbox-types.js";

/** Name of the meter every sandbox instrument is created on. */
export const SANDBOX_METER_NAME = "@suaveplan/sandbox";

/** The stable metric names, as exported to your backend. */
export const SANDBOX_METRIC_NAMES = Object.freeze({
  executions: "sandbox_executions_total",
  ruleBlocks: "sandbox_rule_blocks_total",
  poolAcquisitions: "sandbox_pool_acquisitions_total",
  executionDuration: "sandbox_execution_duration_ms",
  toolCalls: "sandbox_tool_calls_total",
  toolCallDuration: "sandbox_tool_call_duration_ms",
} as const);

/**
 * How an execution ended: `"success"`, the {@link SandboxCode} of the failure,
 * or `"error"` when the failure carries no code (a guest `throw`).
 * Bounded by the code registry, so it is safe as a metric attribute.
 */
export type ExecutionOutcome = "success" | "error" | SandboxCode;

/**
 * How one pool acquisition ended (exactly one is recorded per attempt):
 * `acquired` an idle engine was reused, `created` a new engine was built,
 * `queued` the caller waited and then got an engine, `exhausted` no engine and
 * no queue room, `timeout` the caller waited `acquireTimeoutMs` in vain,
 * `disposed` the pool was destroyed while the caller waited,
 * `failed` the engine factory threw.
 */
export type PoolAcquisitionResult =
  | "acquired"
  | "created"
  | "queued"
  | "exhausted"
  | "timeout"
  | "disposed"
  | "failed";

/**
 * How one guest→host tool call ended (exactly one per call): `ok` the handler
 * answered and the output passed its schema, `error` the handler threw,
 * `invalid` the input failed the tool's `inputSchema` (handler not called),
 * `invalid-output` the output failed `outputSchema` or could not be measured,
 * `denied` an `approveToolCall` hook said no, `limit` a tool limit refused it
 * (`maxToolCalls`, `maxToolPayloadBytes` either way), `aborted` the execution
 * ended while it was pending (its late answer was dropped), `refused` it came
 * after the execution ended or named no tool.
 */
export type ToolCallOutcome =
  | "ok"
  | "error"
  | "invalid"
  | "invalid-output"
  | "denied"
  | "limit"
  | "aborted"
  | "refused";

/** Attributes of `sandbox_executions_total` and `sandbox_execution_duration_ms`. */
export interface ExecutionAttributes extends Attributes {
  engine: EngineName;
  outcome: ExecutionOutcome;
}

/** Attributes of `sandbox_rule_blocks_total`. */
export interface RuleBlockAttributes extends Attributes {
  rule: string;
}

/** Attributes of `sandbox_pool_acquisitions_total`. */
export interface PoolAcquisitionAttributes extends Attributes {
  result: PoolAcquisitionResult;
}

/**
 * Attributes of `sandbox_tool_calls_total` and `sandbox_tool_call_duration_ms`.
 * `tool` is a name from the application's tool set, or `"<unknown>"` for a
 * call naming no tool, so the guest cannot raise the cardinality.
 */
export interface ToolCallAttributes extends Attributes {
  tool: string;
  outcome: ToolCallOutcome;
}

/** The `tool` attribute recorded for a call that names no tool of the set (not a JavaScript identifier, so no tool can have it). */
export const UNKNOWN_TOOL_ATTRIBUTE = "<unknown>";

/** Bucket bounds (ms) advised for `sandbox_tool_call_duration_ms`: tool calls are mostly far shorter than executions. */
const TOOL_CALL_BUCKETS_MS = [
  0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000,
];

/** Bucket bounds (ms) advised for `sandbox_execution_duration_ms`. */
const DURATION_BUCKETS_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];

interface Instruments {
  executions: Counter<ExecutionAttributes>;
  ruleBlocks: Counter<RuleBlockAttributes>;
  poolAcquisitions: Counter<PoolAcquisitionAttributes>;
  duration: Histogram<ExecutionAttributes>;
  toolCalls: Counter<ToolCallAttributes>;
  toolCallDuration: Histogram<ToolCallAttributes>;
}

function createInstruments(meter: Meter): Instruments {
  return {
    executions: meter.createCounter<ExecutionAttributes>(SANDBOX_METRIC_NAMES.executions, {
      description: "Sandbox executions, by engine and outcome.",
    }),
    ruleBlocks: meter.createCounter<RuleBlockAttributes>(SANDBOX_METRIC_NAMES.ruleBlocks, {
      description: "Executions refused by a CodeTransformer rule, by rule name.",
    }),
    poolAcquisitions: meter.createCounter<PoolAcquisitionAttributes>(SANDBOX_METRIC_NAMES.poolAcquisitions, {
      description: "SandboxPool engine acquisitions, by result.",
    }),
    duration: meter.createHistogram<ExecutionAttributes>(SANDBOX_METRIC_NAMES.executionDuration, {
      description: "Wall-clock duration of sandbox executions, by engine and outcome.",
      unit: "ms",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS_MS },
    }),
    toolCalls: meter.createCounter<ToolCallAttributes>(SANDBOX_METRIC_NAMES.toolCalls, {
      description: "Guest-to-host tool calls, by tool and outcome.",
    }),
    toolCallDuration: meter.createHistogram<ToolCallAttributes>(SANDBOX_METRIC_NAMES.toolCallDuration, {
      description:
        "Duration of guest-to-host tool calls from the guest's call to its answer (validation, approval, waiting for a concurrency slot and the handler), by tool and outcome.",
      unit: "ms",
      advice: { explicitBucketBoundaries: TOOL_CALL_BUCKETS_MS },
    }),
  };
}

// The global MeterProvider may be installed after this module loads (the usual
// order in an app: import libraries, then start the SDK). The API has no proxy
// meter provider, so instruments are re-resolved whenever the global provider
// changes and cached per provider otherwise.
let cachedProvider: MeterProvider | undefined;
let cachedInstruments: Instruments | undefined;

function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (cachedInstruments === undefined || provider !== cachedProvider) {
    cachedInstruments = createInstruments(provider.getMeter(SANDBOX_METER_NAME));
    cachedProvider = provider;
  }
  return cachedInstruments;
}

/** `sandbox_executions_total` {engine, outcome}; always records on the current global MeterProvider. */
export const sandboxExecutionsCounter: Counter<ExecutionAttributes> = Object.freeze({
  add(value: number, attributes?: ExecutionAttributes, context?: Context): void {
    instruments().executions.add(value, attributes, context);
  },
});

/** `sandbox_rule_blocks_total` {rule}; always records on the current global MeterProvider. */
export const sandboxRuleBlocksCounter: Counter<RuleBlockAttributes> = Object.freeze({
  add(value: number, attributes?: RuleBlockAttributes, context?: Context): void {
    instruments().ruleBlocks.add(value, attributes, context);
  },
});

/** `sandbox_pool_acquisitions_total` {result}; always records on the current global MeterProvider. */
export const sandboxPoolAcquisitionsCounter: Counter<PoolAcquisitionAttributes> = Object.freeze({
  add(value: number, attributes?: PoolAcquisitionAttributes, context?: Context): void {
    instruments().poolAcquisitions.add(value, attributes, context);
  },
});

/** `sandbox_execution_duration_ms` {engine, outcome}, in ms; always records on the current global MeterProvider. */
export const sandboxExecutionDurationHistogram: Histogram<ExecutionAttributes> = Object.freeze({
  record(value: number, attributes?: ExecutionAttributes, context?: Context): void {
    instruments().duration.record(value, attributes, context);
  },
});

/** `sandbox_tool_calls_total` {tool, outcome}; always records on the current global MeterProvider. */
export const sandboxToolCallsCounter: Counter<ToolCallAttributes> = Object.freeze({
  add(value: number, attributes?: ToolCallAttributes, context?: Context): void {
    instruments().toolCalls.add(value, attributes, context);
  },
});

/** `sandbox_tool_call_duration_ms` {tool, outcome}, in ms; always records on the current global MeterProvider. */
export const sandboxToolCallDurationHistogram: Histogram<ToolCallAttributes> = Object.freeze({
  record(value: number, attributes?: ToolCallAttributes, context?: Context): void {
    instruments().toolCallDuration.record(value, attributes, context);
  },
});

/** The {@link ExecutionOutcome} of a result: `"success"`, its `errorCode`, or `"error"`. */
export function executionOutcome(result: Pick<SandboxResult, "success" | "errorCode">): ExecutionOutcome {
  if (result.success) return "success";
  return result.errorCode ?? "error";
}

/** Count one execution on `sandbox_executions_total`. */
export function recordExecution(engine: EngineName, outcome: ExecutionOutcome): void {
  sandboxExecutionsCounter.add(1, { engine, outcome });
}

/** Count one refusal by the CodeTransformer rule `rule` on `sandbox_rule_blocks_total`. */
export function recordRuleBlock(rule: string): void {
  sandboxRuleBlocksCounter.add(1, { rule });
}

/** Count one pool acquisition attempt on `sandbox_pool_acquisitions_total`. */
export function recordPoolAcquisition(result: PoolAcquisitionResult): void {
  sandboxPoolAcquisitionsCounter.add(1, { result });
}

/** Record one execution's wall-clock duration, in ms, on `sandbox_execution_duration_ms`. */
export function recordDuration(engine: EngineName, outcome: ExecutionOutcome, durationMs: number): void {
  sandboxExecutionDurationHistogram.record(durationMs, { engine, outcome });
}

/** Count one tool call on `sandbox_tool_calls_total`. */
export function recordToolCall(tool: string, outcome: ToolCallOutcome): void {
  sandboxToolCallsCounter.add(1, { tool, outcome });
}

/** Record one tool call's duration, in ms, on `sandbox_tool_call_duration_ms`. */
export function recordToolCallDuration(tool: string, outcome: ToolCallOutcome, durationMs: number): void {
  sandboxToolCallDurationHistogram.record(durationMs, { tool, outcome });
}
