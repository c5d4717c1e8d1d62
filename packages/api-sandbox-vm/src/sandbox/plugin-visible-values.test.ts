import { afterEach, describe, expect, it } from "vitest";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";
import { createVmSandbox, type VmSandboxHandle } from "./create-vm-sandbox.js";

/**
 * What a plugin author sees today, in the places where the plugin host's own guest runtime
 * differs from the shared kernel (codec, inspect, stack frames, tool runner): pinned so that moving
 * the plugin host onto the kernel shows every change as an edit of this file.
 */
let env: ConformanceEnv;
afterEach(async () => {
  await env.cleanup();
});

const PLUGIN = `
  class Point { constructor() { this.x = 1; } }
  export function talk() {
    console.log(function named() {});
    console.log({ a: { b: { c: { d: { e: 1 } } } } });
    console.log({ get x() { return 1; }, set y(v) {} });
    console.log(new Point());
    console.log([1, , 3]);
    console.log(new Map([[1, { a: [1, 2] }]]), new Set([1]));
    console.log(Symbol("s"), 10n, -0, null, undefined);
  }
  export function sparse() { return [1, , 3]; }
  export function boxed() { return new Number(1); }
  export function point() { return new Point(); }
  export async function late() {
    await null;
    throw new Error("late");
  }
  export function unnamed() { const e = new Error("m"); e.name = ""; throw e; }
  export async function ask() { return tools.ask({ q: 1 }); }
  export async function askSure() { return tools.ask({ sure: true }); }
`;

async function start(
  extra: Partial<Parameters<ConformanceEnv["sandbox"]>[0]> = {},
): Promise<VmSandboxHandle> {
  env = createConformanceEnv(createVmSandbox);
  const { entry } = await env.plugin({ "plugin.mjs": PLUGIN });
  return env.sandbox({ pluginModulePath: entry, policy: {}, ...extra });
}

/** The error a call rejected with, and the plugin's own error (its `cause`). */
async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    const { code, message, cause } = error as { code: unknown; message: string; cause: Error };
    return { code, message, cause: { name: cause.name, message: cause.message, stack: cause.stack } };
  }
  throw new Error("expected a rejection");
}

describe("what a plugin sees", () => {
  it("console lines are formatted in the plugin as Node formats them, objects to depth 4", async () => {
    const logs: unknown[] = [];
    const sandbox = await start({ onLog: (entry) => logs.push(entry) });
    await sandbox.call("talk");
    expect(logs.map((entry) => (entry as { message: string }).message)).toEqual([
      "[Function: named]",
      "{\n  a: {\n    b: { c: { d: { e: 1 } } }\n  }\n}",
      "{ x: [Getter], y: [Setter] }",
      "Point { x: 1 }",
      "[ 1, <1 empty item>, 3 ]",
      "Map(1) { 1 => { a: [ 1, 2 ] } } Set(1) { 1 }",
      "Symbol(s) 10n -0 null undefined",
    ]);
  });

  it("results: a hole stays a hole, a boxed number is refused naming it, a class instance a plain object", async () => {
    const sandbox = await start();
    const sparse = (await sandbox.call("sparse")) as unknown[];
    const boxed = await sandbox.call("boxed").catch((error: { code: string; message: string }) => ({
      code: error.code,
      message: error.message,
    }));
    const point = await sandbox.call("point");
    expect({
      sparse,
      holeIsOwn: 1 in sparse,
      boxed,
      point,
      pointProto: Object.getPrototypeOf(point),
    }).toEqual({
      sparse: Object.assign([1], { 2: 3 }),
      holeIsOwn: false,
      boxed: {
        code: "SAND_VM_DATA_CLONE_FAILED",
        message:
          "result (Number object) could not be cloned across the sandbox boundary (SAND_VM_DATA_CLONE_FAILED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_DATA_CLONE_FAILED.md",
      },
      point: { x: 1 },
      pointProto: Object.prototype,
    });
  });

  it("a plugin's error keeps its guest-only stack: no async marker, an empty name gives a bare message", async () => {
    const sandbox = await start();
    expect([await thrown(sandbox.call("late")), await thrown(sandbox.call("unnamed"))]).toEqual([
      {
        code: "SAND_VM_PLUGIN_THREW",
        message:
          'plugin export "late" threw Error: late (SAND_VM_PLUGIN_THREW); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_PLUGIN_THREW.md',
        cause: {
          name: "Error",
          message: "late",
          stack: "Error: late\n    at late (sandbox:/plugin/plugin.mjs:17:11)",
        },
      },
      {
        code: "SAND_VM_PLUGIN_THREW",
        message:
          'plugin export "unnamed" threw : m (SAND_VM_PLUGIN_THREW); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_PLUGIN_THREW.md',
        cause: { name: "", message: "m", stack: "m\n    at unnamed (sandbox:/plugin/plugin.mjs:19:41)" },
      },
    ]);
  });

  it("denies a tool whose needsApproval asks for approval: the plugin host has no one to ask", async () => {
    let executed = 0;
    const sandbox = await start({
      policy: { tools: ["ask"] },
      tools: {
        ask: {
          inputSchema: { type: "object" },
          needsApproval: (input: { sure?: boolean }) => input.sure !== true,
          execute: () => {
            executed++;
            return "yes";
          },
        },
      } as never,
    });
    const message =
      "tool ask was denied: it needs approval (needsApproval) and the plugin host cannot ask for approval; give the plugin a tool without needsApproval";
    await expect(sandbox.call("ask")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect({ value: await sandbox.call("askSure"), executed }).toEqual({ value: "yes", executed: 1 });
    expect(sandbox.calls().map(({ status, error }) => ({ status, error }))).toEqual([
      { status: "denied", error: { name: "ToolError", tool: "ask", message } },
      { status: "ok", error: undefined },
    ]);
  });
});
