import { metrics } from "@opentelemetry/api";
import {
  type DataPoint,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as telemetry from "./index.js";
import {
  executionOutcome,
  recordDuration,
  recordExecution,
  recordPoolAcquisition,
  recordRuleBlock,
  recordToolCall,
  recordToolCallDuration,
  SANDBOX_METER_NAME,
  UNKNOWN_TOOL_ATTRIBUTE,
} from "./index.js";

/** A pull reader: the test decides when to collect. */
class InMemoryReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let reader: InMemoryReader;
let provider: MeterProvider;

async function collected(): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const byName = new Map<string, MetricData>();
  for (const scope of resourceMetrics.scopeMetrics) {
    expect(scope.scope.name).toBe(SANDBOX_METER_NAME);
    for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
  }
  return byName;
}

function points(metric: MetricData | undefined): Array<{ attributes: unknown; value: unknown }> {
  const dataPoints = (metric?.dataPoints ?? []) as DataPoint<unknown>[];
  return dataPoints.map((p) => ({ attributes: p.attributes, value: p.value }));
}

// Recorded while no MeterProvider is installed: goes to the no-op meter and
// must not be lost as a "stuck" no-op instrument later.
recordExecution("vm", "success");

beforeEach(() => {
  reader = new InMemoryReader();
  provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
});

afterEach(async () => {
  metrics.disable();
  await provider.shutdown();
});

describe("telemetry", () => {
  it("exports four instruments and four recorders", () => {
    // The seed's four execution instruments and recorders (the tool-call ones are checked below).
    expect(
      [
        telemetry.sandboxExecutionsCounter,
        telemetry.sandboxRuleBlocksCounter,
        telemetry.sandboxPoolAcquisitionsCounter,
        telemetry.sandboxExecutionDurationHistogram,
      ].map((instrument) => typeof instrument),
    ).toEqual(["object", "object", "object", "object"]);
    expect(
      [
        telemetry.recordExecution,
        telemetry.recordRuleBlock,
        telemetry.recordPoolAcquisition,
        telemetry.recordDuration,
      ].map((recorder) => typeof recorder),
    ).toEqual(["function", "function", "function", "function"]);
  });

  it("exports six instruments, six recorders, the execution span and the tool-call span", () => {
    expect(Object.keys(telemetry).sort()).toEqual([
      "SANDBOX_METER_NAME",
      "SANDBOX_METRIC_NAMES",
      "SANDBOX_SPAN_NAMES",
      "SANDBOX_TRACER_NAME",
      "TOOL_CALL_SPAN_ATTRIBUTES",
      "UNKNOWN_TOOL_ATTRIBUTE",
      "executionOutcome",
      "recordDuration",
      "recordExecution",
      "recordPoolAcquisition",
      "recordRuleBlock",
      "recordToolCall",
      "recordToolCallDuration",
      "sandboxExecutionDurationHistogram",
      "sandboxExecutionsCounter",
      "sandboxPoolAcquisitionsCounter",
      "sandboxRuleBlocksCounter",
      "sandboxToolCallDurationHistogram",
      "sandboxToolCallsCounter",
      "startExecutionSpan",
      "startToolCallSpan",
    ]);
    expect(typeof telemetry.sandboxExecutionsCounter.add).toBe("function");
    expect(typeof telemetry.sandboxRuleBlocksCounter.add).toBe("function");
    expect(typeof telemetry.sandboxPoolAcquisitionsCounter.add).toBe("function");
    expect(typeof telemetry.sandboxExecutionDurationHistogram.record).toBe("function");
    expect(typeof telemetry.sandboxToolCallsCounter.add).toBe("function");
    expect(typeof telemetry.sandboxToolCallDurationHistogram.record).toBe("function");
    expect(telemetry.SANDBOX_METRIC_NAMES).toEqual({
      executions: "sandbox_executions_total",
      ruleBlocks: "sandbox_rule_blocks_total",
      poolAcquisitions: "sandbox_pool_acquisitions_total",
      executionDuration: "sandbox_execution_duration_ms",
      toolCalls: "sandbox_tool_calls_total",
      toolCallDuration: "sandbox_tool_call_duration_ms",
    });
  });

  it("records on a MeterProvider installed after the module loaded", async () => {
    recordExecution("vm", "success");
    recordExecution("vm", "success");
    recordExecution("worker", "SANDBOX_TIMEOUT");
    recordRuleBlock("block-process");
    recordPoolAcquisition("created");
    recordPoolAcquisition("exhausted");
    recordPoolAcquisition("exhausted");
    recordDuration("isolate", "success", 12);
    recordDuration("isolate", "success", 700);

    const byName = await collected();
    expect([...byName.keys()].sort()).toEqual([
      "sandbox_execution_duration_ms",
      "sandbox_executions_total",
      "sandbox_pool_acquisitions_total",
      "sandbox_rule_blocks_total",
    ]);
    expect(points(byName.get("sandbox_executions_total"))).toEqual([
      { attributes: { engine: "vm", outcome: "success" }, value: 2 },
      { attributes: { engine: "worker", outcome: "SANDBOX_TIMEOUT" }, value: 1 },
    ]);
    expect(points(byName.get("sandbox_rule_blocks_total"))).toEqual([
      { attributes: { rule: "block-process" }, value: 1 },
    ]);
    expect(points(byName.get("sandbox_pool_acquisitions_total"))).toEqual([
      { attributes: { result: "created" }, value: 1 },
      { attributes: { result: "exhausted" }, value: 2 },
    ]);

    const duration = byName.get("sandbox_execution_duration_ms");
    expect(duration?.descriptor.unit).toBe("ms");
    const [histogram] = (duration?.dataPoints ?? []) as DataPoint<Histogram>[];
    expect(histogram?.attributes).toEqual({ engine: "isolate", outcome: "success" });
    expect(histogram?.value.count).toBe(2);
    expect(histogram?.value.sum).toBe(712);
    expect(histogram?.value.min).toBe(12);
    expect(histogram?.value.max).toBe(700);
    expect(histogram?.value.buckets.boundaries).toEqual([
      1, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000,
    ]);
  });

  it("records tool calls by tool and outcome, with finer duration buckets", async () => {
    recordToolCall("getWeather", "ok");
    recordToolCall("getWeather", "ok");
    recordToolCall("getWeather", "denied");
    recordToolCall(UNKNOWN_TOOL_ATTRIBUTE, "refused");
    recordToolCallDuration("getWeather", "ok", 0.75);
    recordToolCallDuration("getWeather", "ok", 40);

    const byName = await collected();
    expect(points(byName.get("sandbox_tool_calls_total"))).toEqual([
      { attributes: { tool: "getWeather", outcome: "ok" }, value: 2 },
      { attributes: { tool: "getWeather", outcome: "denied" }, value: 1 },
      { attributes: { tool: "<unknown>", outcome: "refused" }, value: 1 },
    ]);
    const duration = byName.get("sandbox_tool_call_duration_ms");
    expect(duration?.descriptor.unit).toBe("ms");
    const [histogram] = (duration?.dataPoints ?? []) as DataPoint<Histogram>[];
    expect({
      attributes: histogram?.attributes,
      count: histogram?.value.count,
      sum: histogram?.value.sum,
      boundaries: histogram?.value.buckets.boundaries,
    }).toEqual({
      attributes: { tool: "getWeather", outcome: "ok" },
      count: 2,
      sum: 40.75,
      boundaries: [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000],
    });
  });

  it("follows a replaced MeterProvider instead of keeping stale instruments", async () => {
    recordRuleBlock("block-eval");
    expect(points((await collected()).get("sandbox_rule_blocks_total"))).toEqual([
      { attributes: { rule: "block-eval" }, value: 1 },
    ]);

    metrics.disable();
    const secondReader = new InMemoryReader();
    const second = new MeterProvider({ readers: [secondReader] });
    metrics.setGlobalMeterProvider(second);
    recordRuleBlock("block-require");

    const { resourceMetrics } = await secondReader.collect();
    const rules = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    expect(rules.map((m) => m.descriptor.name)).toEqual(["sandbox_rule_blocks_total"]);
    expect(points(rules[0])).toEqual([{ attributes: { rule: "block-require" }, value: 1 }]);
    await second.shutdown();
  });

  it("derives a bounded outcome from a result", () => {
    expect(executionOutcome({ success: true })).toBe("success");
    expect(executionOutcome({ success: false, errorCode: "SANDBOX_MEMORY_EXCEEDED" })).toBe(
      "SANDBOX_MEMORY_EXCEEDED",
    );
    expect(executionOutcome({ success: false })).toBe("error");
  });
});
