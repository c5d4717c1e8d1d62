import { context, metrics, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { type DataPoint, type Histogram, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolRunner, type ToolSet } from "./index.js";

/** A pull reader: the test decides when to collect. */
class PullReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

let reader: PullReader;
let meterProvider: MeterProvider;
let exporter: InMemorySpanExporter;
let tracerProvider: BasicTracerProvider;

beforeEach(() => {
  reader = new PullReader();
  meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  exporter = new InMemorySpanExporter();
  tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(tracerProvider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterEach(async () => {
  metrics.disable();
  trace.disable();
  context.disable();
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
});

async function toolMetrics() {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const out: Record<string, unknown[]> = {};
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (!metric.descriptor.name.startsWith("sandbox_tool_call")) continue;
      out[metric.descriptor.name] = metric.dataPoints.map((p) => {
        const point = p as DataPoint<number | Histogram>;
        return {
          attributes: point.attributes,
          value:
            typeof point.value === "number"
              ? point.value
              : { count: point.value.count, sum: point.value.sum },
        };
      });
    }
  }
  return out;
}

const tools: ToolSet = {
  getWeather: {
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => {
      const lookup = trace.getTracer("weather-service").startSpan("lookup city");
      lookup.end();
      if (city === "Nowhere") throw new Error("unknown city");
      return { tempC: 21 };
    },
  },
};

describe("tool-call telemetry", () => {
  it("counts each call and its duration by tool and outcome", async () => {
    let now = 0;
    const run = createToolRunner({
      tools,
      clock: () => now,
      approveToolCall: (call) => (call.input as { city: string }).city !== "Secret",
    });
    const tick = (ms: number) => {
      now += ms;
    };
    const calls = [
      run.call("getWeather", { city: "Paris" }, "1"),
      run.call("getWeather", { city: "Rome" }, "2"),
      run.call("getWeather", { city: 1 }, "3"),
      run.call("getWeather", { city: "Secret" }, "4"),
      run.call("getWeather", { city: "Nowhere" }, "5"),
      run.call("nope", {}, "6"),
    ];
    tick(4);
    await Promise.allSettled(calls);
    expect(run.journal().map((r) => r.status)).toEqual(["ok", "ok", "invalid", "denied", "error", "refused"]);
    expect(await toolMetrics()).toEqual({
      sandbox_tool_calls_total: [
        { attributes: { tool: "<unknown>", outcome: "refused" }, value: 1 },
        { attributes: { tool: "getWeather", outcome: "invalid" }, value: 1 },
        { attributes: { tool: "getWeather", outcome: "denied" }, value: 1 },
        { attributes: { tool: "getWeather", outcome: "ok" }, value: 2 },
        { attributes: { tool: "getWeather", outcome: "error" }, value: 1 },
      ],
      sandbox_tool_call_duration_ms: [
        { attributes: { tool: "<unknown>", outcome: "refused" }, value: { count: 1, sum: 0 } },
        { attributes: { tool: "getWeather", outcome: "invalid" }, value: { count: 1, sum: 4 } },
        { attributes: { tool: "getWeather", outcome: "denied" }, value: { count: 1, sum: 4 } },
        { attributes: { tool: "getWeather", outcome: "ok" }, value: { count: 2, sum: 8 } },
        { attributes: { tool: "getWeather", outcome: "error" }, value: { count: 1, sum: 4 } },
      ],
    });
  });

  it("traces each call as a child of the execution's span, with the handler's spans under it", async () => {
    const execution = trace.getTracer("facade").startSpan("sandbox.execute");
    const run = createToolRunner({ tools, parentContext: trace.setSpan(context.active(), execution) });
    await run.call("getWeather", { city: "Paris" }, "1");
    await run.call("getWeather", { city: "Nowhere" }, "2").catch(() => undefined);
    execution.end();

    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s.name]));
    expect(
      spans.map((s) => ({
        name: s.name,
        parent: s.parentSpanContext === undefined ? undefined : byId.get(s.parentSpanContext.spanId),
        id: s.attributes["gen_ai.tool.call.id"],
        outcome: s.attributes["sandbox.tool.outcome"],
        status: s.status,
      })),
    ).toEqual([
      {
        name: "lookup city",
        parent: "execute_tool getWeather",
        id: undefined,
        outcome: undefined,
        status: { code: SpanStatusCode.UNSET },
      },
      {
        name: "execute_tool getWeather",
        parent: "sandbox.execute",
        id: "1",
        outcome: "ok",
        status: { code: SpanStatusCode.UNSET },
      },
      {
        name: "lookup city",
        parent: "execute_tool getWeather",
        id: undefined,
        outcome: undefined,
        status: { code: SpanStatusCode.UNSET },
      },
      {
        name: "execute_tool getWeather",
        parent: "sandbox.execute",
        id: "2",
        outcome: "error",
        status: { code: SpanStatusCode.ERROR, message: "unknown city" },
      },
      {
        name: "sandbox.execute",
        parent: undefined,
        id: undefined,
        outcome: undefined,
        status: { code: SpanStatusCode.UNSET },
      },
    ]);
  });

  it("ends the span of an aborted call when it is aborted, and starts none for calls it does not journal", async () => {
    const run = createToolRunner({
      tools: { wait: { inputSchema: {}, execute: () => new Promise(() => {}) } },
      maxToolCalls: 1,
    });
    const pending = run.call("wait", {}, "1");
    await Promise.all(
      [run.call("wait", {}, "2"), run.call("wait", {}, "3")].map((p) => p.catch(() => undefined)),
    );
    run.abortAll(new Error("the execution timed out"));
    await pending.catch(() => undefined);
    expect(
      exporter
        .getFinishedSpans()
        .map((s) => [s.attributes["gen_ai.tool.call.id"], s.attributes["sandbox.tool.outcome"]]),
    ).toEqual([
      ["2", "limit"],
      ["1", "aborted"],
    ]);
    expect((await toolMetrics()).sandbox_tool_calls_total).toEqual([
      { attributes: { tool: "wait", outcome: "limit" }, value: 2 },
      { attributes: { tool: "wait", outcome: "aborted" }, value: 1 },
    ]);
  });
});
