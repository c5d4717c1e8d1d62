import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createSdkDenialMetrics } from "../../test/support/sdk-metrics.js";
import { createVmSandbox, type VmSandboxHandle } from "../sandbox/create-vm-sandbox.js";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";

const PLUGIN = `
export async function weather(city) {
  const w = await tools.getWeather({ city });
  return w.tempC * 2;
}
export async function attempt(name, input) {
  try {
    return { ok: true, value: await tools[name](input) };
  } catch (e) {
    return {
      ok: false,
      guestRealm: e instanceof Error,
      name: e.name,
      tool: e.tool,
      code: e.code,
      message: e.message,
      keys: Object.keys(e),
      stack: String(e.stack),
    };
  }
}
export function shape() {
  return { names: Object.keys(tools), frozen: Object.isFrozen(tools), types: Object.values(tools).map((f) => typeof f) };
}
export function wait() { return tools.wait({}); }
`;

interface Seen {
  handled: Array<{ tool: string; input: unknown; toolCallId: string }>;
  aborted: unknown[];
  started: Promise<void>;
}

let env: ConformanceEnv;
afterEach(async () => {
  await env.cleanup();
});

async function start(): Promise<{ sandbox: VmSandboxHandle; seen: Seen }> {
  env = createConformanceEnv(createVmSandbox, createSdkDenialMetrics());
  const { entry } = await env.plugin({ "plugin.mjs": PLUGIN });
  let markStarted = () => {};
  const seen: Seen = {
    handled: [],
    aborted: [],
    started: new Promise<void>((resolve) => {
      markStarted = resolve;
    }),
  };
  const sandbox = await env.sandbox({
    pluginModulePath: entry,
    policy: { tools: ["getWeather", "fail", "wait"] },
    meterProvider: env.metrics.meterProvider,
    tools: {
      getWeather: {
        description: "Current weather for a city",
        inputSchema: z.object({ city: z.string() }),
        outputSchema: z.object({ tempC: z.number() }),
        execute: async (input: { city: string }, { toolCallId }) => {
          seen.handled.push({ tool: "getWeather", input, toolCallId });
          return { tempC: 21 };
        },
      },
      fail: {
        inputSchema: { type: "object" },
        execute: () => {
          seen.handled.push({ tool: "fail", input: undefined, toolCallId: "" });
          throw new Error("upstream exploded");
        },
      },
      wait: {
        inputSchema: z.object({}),
        execute: (_input, { abortSignal }) =>
          new Promise((resolve) => {
            abortSignal.addEventListener("abort", () => {
              seen.aborted.push((abortSignal.reason as { code?: unknown }).code);
              resolve(null);
            });
            markStarted();
          }),
      },
      secret: {
        inputSchema: z.object({}),
        execute: () => {
          seen.handled.push({ tool: "secret", input: undefined, toolCallId: "" });
          return "leaked";
        },
      },
    },
  });
  return { sandbox, seen };
}

describe("createVmSandbox tools", () => {
  it("installs a frozen `tools` global of async functions, one per tool", async () => {
    const { sandbox } = await start();
    expect(await sandbox.call("shape")).toEqual({
      names: ["getWeather", "fail", "wait", "secret"],
      frozen: true,
      types: ["function", "function", "function", "function"],
    });
  });

  it("runs an allowed call with a copy of the validated input and journals it", async () => {
    const { sandbox, seen } = await start();
    expect(await sandbox.call("weather", "Paris")).toBe(42);
    expect(seen.handled).toEqual([{ tool: "getWeather", input: { city: "Paris" }, toolCallId: "call_1" }]);
    expect(sandbox.calls()).toEqual([
      {
        id: "call_1",
        tool: "getWeather",
        input: { city: "Paris" },
        output: { tempC: 21 },
        ok: true,
        status: "ok",
        durationMs: expect.any(Number),
      },
    ]);
  });

  it("denies a tool policy.tools does not list: handler not called, denial counted and journaled", async () => {
    const { sandbox, seen } = await start();
    const message =
      "tool secret was denied by the sandbox policy (no-matching-rule); list it in policy.tools to allow it";
    expect(await sandbox.call("attempt", "secret", {})).toEqual({
      ok: false,
      guestRealm: true,
      name: "ToolError",
      tool: "secret",
      code: "PERMISSION_DENIED",
      message,
      keys: ["tool", "code"],
      stack: expect.any(String),
    });
    expect(seen.handled).toEqual([]);
    expect(await env.metrics.read()).toEqual({ tool: 1 });
    expect(sandbox.calls()).toEqual([
      {
        id: "call_1",
        tool: "secret",
        input: {},
        error: { name: "ToolError", tool: "secret", message },
        ok: false,
        status: "denied",
        durationMs: expect.any(Number),
      },
    ]);
  });

  it("refuses an invalid input naming the field, without calling the handler", async () => {
    const { sandbox, seen } = await start();
    const message = "tool getWeather got an invalid input: input.city: expected string, received number";
    expect(await sandbox.call("attempt", "getWeather", { city: 5 })).toMatchObject({
      ok: false,
      name: "ToolError",
      tool: "getWeather",
      code: undefined,
      message,
    });
    expect(seen.handled).toEqual([]);
    expect(sandbox.calls()).toEqual([
      {
        id: "call_1",
        tool: "getWeather",
        input: { city: 5 },
        error: { name: "ToolError", tool: "getWeather", message },
        ok: false,
        status: "invalid",
        durationMs: expect.any(Number),
      },
    ]);
  });

  it("turns a handler throw into a guest ToolError with the message only, no host stack", async () => {
    const { sandbox } = await start();
    const failure = (await sandbox.call("attempt", "fail", {})) as Record<string, unknown>;
    expect({ ...failure, stack: undefined }).toEqual({
      ok: false,
      guestRealm: true,
      name: "ToolError",
      tool: "fail",
      code: undefined,
      message: "upstream exploded",
      keys: ["tool"],
      stack: undefined,
    });
    expect(failure.stack).not.toMatch(/node:|file:|\/work\/|host-tools|vm-tool-host|create-vm-sandbox/);
    expect(sandbox.calls()).toEqual([
      {
        id: "call_1",
        tool: "fail",
        input: {},
        error: { name: "ToolError", tool: "fail", message: "upstream exploded" },
        ok: false,
        status: "error",
        durationMs: expect.any(Number),
      },
    ]);
  });

  it("aborts a pending call's abortSignal when the sandbox is disposed", async () => {
    const { sandbox, seen } = await start();
    const pending = sandbox.call("wait").catch((error: { code?: unknown }) => error.code);
    await seen.started;
    expect(sandbox.calls().map((c) => c.status)).toEqual(["pending"]);
    await sandbox.dispose();
    expect(seen.aborted).toEqual(["SAND_VM_DISPOSED"]);
    expect(await pending).toBe("SAND_VM_DISPOSED");
    expect(sandbox.calls()).toEqual([
      {
        id: "call_1",
        tool: "wait",
        input: {},
        error: {
          name: "ToolError",
          tool: "wait",
          message: "tool wait was aborted: the sandbox was disposed",
        },
        ok: false,
        status: "aborted",
        durationMs: expect.any(Number),
      },
    ]);
  });

  it("rejects a malformed tool definition naming the field", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({ "plugin.mjs": "export const x = () => typeof tools;" });
    const bad = { getWeather: { inputSchema: z.object({}) } } as never;
    await expect(env.sandbox({ pluginModulePath: entry, policy: {}, tools: bad })).rejects.toMatchObject({
      code: "SAND_VM_INVALID_OPTIONS",
      details: { field: "options.tools.getWeather.execute" },
    });
    const plain = await env.sandbox({ pluginModulePath: entry, policy: {} });
    expect(await plain.call("x")).toBe("undefined");
    expect(plain.calls()).toEqual([]);
  });
});
