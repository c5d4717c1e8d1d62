import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describeGuestGlobals } from "@suaveplan/sandbox-core/guest-script";
import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSandbox, type Sandbox } from "./sandbox.js";

/** The engines host tools run on through the facade; every one must give the same journal. */
// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;

const weather = {
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string() }),
  outputSchema: z.object({ tempC: z.number() }),
  execute: async ({ city }: { city: string }) => ({ tempC: city === "Paris" ? 21 : 5 }),
};

const live: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(live.splice(0).map((sandbox) => sandbox.destroy()));
});
const sandboxOf = (config: Parameters<typeof createSandbox>[0]) => {
  const sandbox = createSandbox({ timeout: 10_000, ...config });
  live.push(sandbox);
  return sandbox;
};

describe.each(ENGINES)("host tools through createSandbox (%s)", (engine) => {
  it("runs the code-mode example: typed async tools, a result and a journal", async () => {
    const sandbox = sandboxOf({ engine, tools: { getWeather: weather } });
    const r = await sandbox.execute(`const w = await tools.getWeather({ city: "Paris" }); w.tempC * 2`);
    expect({ success: r.success, result: r.result, error: r.error }).toEqual({
      success: true,
      result: 42,
      error: undefined,
    });
    expect(r.calls).toEqual([
      {
        id: expect.any(String),
        tool: "getWeather",
        input: { city: "Paris" },
        output: { tempC: 21 },
        ok: true,
        status: "ok",
        durationMs: expect.any(Number),
      },
    ]);
    expect(r.usage?.toolCalls).toBe(1);
    expect(sandbox.getAuditLog().at(-1)?.toolCalls).toEqual([{ tool: "getWeather", status: "ok" }]);
  });

  it("validates input before the handler: the guest catches a ToolError naming the field", async () => {
    let handled = 0;
    const sandbox = sandboxOf({
      engine,
      tools: {
        getWeather: {
          ...weather,
          execute: async () => {
            handled += 1;
            return { tempC: 0 };
          },
        },
      },
    });
    const r = await sandbox.execute(
      "let seen; try { await tools.getWeather({ city: 7 }); } catch (e) { seen = [e.name, e.tool, e.message]; } seen",
    );
    expect(r.result).toEqual([
      "ToolError",
      "getWeather",
      "tool getWeather got an invalid input: input.city: expected string, received number",
    ]);
    expect(handled).toBe(0);
    expect(r.calls.map((call) => call.status)).toEqual(["invalid"]);
  });

  it("an approval hook that says no keeps the call from the handler; per-call tools win by name", async () => {
    const sandbox = sandboxOf({
      engine,
      tools: { getWeather: weather },
      approveToolCall: (call) => call.tool !== "secret",
    });
    const r = await sandbox.execute(
      "const a = await tools.getWeather({ city: 'Oslo' }); let b; try { await tools.secret(); } catch (e) { b = e.message; } [a.tempC, b]",
      {},
      {
        tools: {
          getWeather: { ...weather, execute: async () => ({ tempC: -3 }) },
          secret: { inputSchema: z.undefined(), execute: async () => "leaked" },
        },
      },
    );
    expect(r.result).toEqual([-3, "tool secret was denied"]);
    expect(r.calls.map((call) => [call.tool, call.status])).toEqual([
      ["getWeather", "ok"],
      ["secret", "denied"],
    ]);
  });

  it("a call still pending at the timeout has its abortSignal aborted and its answer dropped", async () => {
    let aborted = false;
    const sandbox = sandboxOf({
      engine,
      timeout: 500,
      tools: {
        slow: {
          inputSchema: z.number(),
          execute: (_input: number, { abortSignal }: { abortSignal: AbortSignal }) =>
            new Promise((resolve) => {
              abortSignal.addEventListener("abort", () => {
                aborted = true;
                setTimeout(() => resolve("too late"), 10);
              });
            }),
        },
      },
    });
    const r = await sandbox.execute("await tools.slow(1)");
    expect({ success: r.success, errorCode: r.errorCode }).toEqual({
      success: false,
      errorCode: "SANDBOX_TIMEOUT",
    });
    expect(aborted).toBe(true);
    expect(r.calls.map((call) => call.status)).toEqual(["aborted"]);
  });

  it("leaving executeStream early cancels the execution: no more tool calls after the break", async () => {
    let ticks = 0;
    const sandbox = sandboxOf({
      engine,
      tools: {
        tick: {
          inputSchema: z.undefined(),
          execute: async () => {
            ticks += 1;
            return ticks;
          },
        },
      },
    });
    for await (const chunk of sandbox.executeStream("console.log('go'); for (;;) { await tools.tick(); }")) {
      if (chunk.type === "log") break;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = ticks;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ticks).toBe(after);
  });
});

describe("toolDeclarations()", () => {
  it("gives the TypeScript declarations of the guest's tools, descriptions as TSDoc", () => {
    // Then the guest's globals as a comment block (pinned in sandbox-tools' tool-declarations tests).
    const globals = describeGuestGlobals()
      .split("\n")
      .map((line) => `// ${line}`)
      .join("\n");
    expect(sandboxOf({ tools: { getWeather: weather } }).toolDeclarations()).toBe(
      `declare const tools: {\n  /** Current weather for a city */\n  getWeather(input: { city: string }): Promise<{ tempC: number }>;\n};\n\n${globals}`,
    );
  });
});

describe("tracing", () => {
  const exporter = new InMemorySpanExporter();
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    manager.enable();
    context.setGlobalContextManager(manager);
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });

  it("records one span per execution with a child span per tool call", async () => {
    const sandbox = sandboxOf({ engine: "vm", tools: { getWeather: weather } });
    await sandbox.execute(
      "await tools.getWeather({ city: 'Paris' }); await tools.getWeather({ city: 'Rome' }); 1",
    );
    const spans = exporter.getFinishedSpans();
    const execution = spans.find((span) => span.name === "sandbox.execute");
    expect(execution?.attributes).toEqual({ "sandbox.engine": "vm", "sandbox.tool_calls": 2 });
    const children = spans.filter((span) => span.name === "execute_tool getWeather");
    expect(children.map((span) => span.parentSpanContext?.spanId)).toEqual([
      execution?.spanContext().spanId,
      execution?.spanContext().spanId,
    ]);
  });
});
