import { context, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SANDBOX_TRACER_NAME, startToolCallSpan } from "./index.js";

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterEach(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

function shape(span: ReadableSpan) {
  return {
    name: span.name,
    scope: span.instrumentationScope.name,
    attributes: span.attributes,
    status: span.status,
    parentSpanId: span.parentSpanContext?.spanId,
  };
}

describe("the tool-call span", () => {
  it("is a child of the given parent, named and attributed by the GenAI conventions", () => {
    const parent = trace.getTracer("test").startSpan("execution");
    const parentContext = trace.setSpan(context.active(), parent);
    startToolCallSpan("getWeather", "7", parentContext).end("ok");
    startToolCallSpan("getWeather", "8", parentContext).end("denied", "tool getWeather was denied");
    parent.end();

    const [ok, denied] = exporter.getFinishedSpans();
    const parentSpanId = parent.spanContext().spanId;
    expect([ok, denied].map((span) => (span === undefined ? undefined : shape(span)))).toEqual([
      {
        name: "execute_tool getWeather",
        scope: SANDBOX_TRACER_NAME,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "getWeather",
          "gen_ai.tool.call.id": "7",
          "gen_ai.tool.type": "function",
          "sandbox.tool.outcome": "ok",
        },
        status: { code: SpanStatusCode.UNSET },
        parentSpanId,
      },
      {
        name: "execute_tool getWeather",
        scope: SANDBOX_TRACER_NAME,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "getWeather",
          "gen_ai.tool.call.id": "8",
          "gen_ai.tool.type": "function",
          "sandbox.tool.outcome": "denied",
          "error.type": "denied",
        },
        status: { code: SpanStatusCode.ERROR, message: "tool getWeather was denied" },
        parentSpanId,
      },
    ]);
  });

  it("makes itself the active span for what run() calls, across awaits, and ends once", async () => {
    const span = startToolCallSpan("lookup", "1");
    const seen = await span.run(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      const child = trace.getTracer("handler").startSpan("db query");
      child.end();
      return child;
    });
    span.end("error", "boom");
    span.end("ok");

    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.name)).toEqual(["db query", "execute_tool lookup"]);
    const [query, tool] = spans;
    expect(query?.parentSpanContext?.spanId).toBe(tool?.spanContext().spanId);
    expect(seen.spanContext().traceId).toBe(tool?.spanContext().traceId);
    expect(tool?.parentSpanContext).toBeUndefined();
    expect(tool?.status).toEqual({ code: SpanStatusCode.ERROR, message: "boom" });
  });

  it("is a no-op when no tracer provider is registered", () => {
    trace.disable();
    const span = startToolCallSpan("lookup", "1");
    expect(span.run(() => trace.getActiveSpan()?.isRecording())).toBe(false);
    span.end("ok");
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});
