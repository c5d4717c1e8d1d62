import { mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";
import { vmConformanceScenario } from "../testing/conformance-scenarios.js";
import { createVmSandbox, type VmSandboxHandle } from "./create-vm-sandbox.js";

let env: ConformanceEnv;
afterEach(async () => {
  await env.cleanup();
});
function runScenario(name: string): () => Promise<void> {
  return async () => {
    env = createConformanceEnv(createVmSandbox);
    await vmConformanceScenario(name).run(env);
  };
}
async function failure(
  promise: Promise<unknown>,
): Promise<{ name: string; code: unknown; message: string; details?: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { name: string; code?: unknown; message: string; details?: unknown };
    return { name: e.name, code: e.code, message: e.message, details: e.details };
  }
  throw new Error("expected a rejection");
}

describe("createVmSandbox (spec)", () => {
  it(
    "process global is unreachable inside sandbox",
    runScenario("process global is unreachable inside sandbox"),
  );
  it("globalThis is frozen", runScenario("globalThis is frozen"));
  it("direct dynamic execution is rejected", runScenario("direct dynamic execution is rejected"));
  it("indirect dynamic execution is rejected", runScenario("indirect dynamic execution is rejected"));
  it("node built-in imports are forbidden", runScenario("node built-in imports are forbidden"));
});

describe("createVmSandbox", () => {
  async function start(source: string, extra: Record<string, string> = {}): Promise<VmSandboxHandle> {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({ "plugin.mjs": source, ...extra });
    return env.sandbox({ pluginModulePath: entry, policy: {} });
  }

  it("exposes function exports through call() and exports, copying data both ways", async () => {
    const sandbox = await start(`
      export function echo(value) { return value; }
      export function mutate(obj) { obj.changed = true; return obj; }
      export default function main() { return "default"; }
      export const notAFunction = 42;`);
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const value = {
      text: "héllo",
      numbers: [1, -0, Number.NaN, Number.POSITIVE_INFINITY],
      big: 2n ** 70n,
      nothing: undefined,
      date: new Date(86_400_000),
      pattern: /a+b/giu,
      map: new Map<unknown, unknown>([[1, { deep: [true] }]]),
      set: new Set(["a", "b"]),
      bytes: new Uint8Array([0, 1, 254, 255]),
      floats: new Float64Array([1.5]),
      buffer: new Uint16Array([513]).buffer,
      error: Object.assign(new RangeError("too far"), { code: "E_FAR" }),
      cyclic,
    };
    const back = (await sandbox.call("echo", value)) as typeof value;
    expect(back).toEqual(value);
    expect(back.cyclic.self).toBe(back.cyclic);
    expect(back.error).toBeInstanceOf(RangeError);
    const original = { changed: false };
    expect(await sandbox.exports.mutate?.(original)).toEqual({ changed: true });
    expect(original).toEqual({ changed: false });
    expect([...sandbox.exportNames].sort()).toEqual(["default", "echo", "mutate"]);
    expect(await sandbox.call("default")).toBe("default");
  });

  it("refuses values that cannot be copied, with SAND_VM_DATA_CLONE_FAILED", async () => {
    const sandbox = await start(`
      export const giveFunction = () => () => 1;
      export const giveSymbol = () => ({ s: Symbol("x") });
      export const take = (v) => typeof v;`);
    expect(await failure(sandbox.call("take", () => 1))).toMatchObject({ code: "SAND_VM_DATA_CLONE_FAILED" });
    expect(await failure(sandbox.call("giveFunction"))).toMatchObject({ code: "SAND_VM_DATA_CLONE_FAILED" });
    expect(await failure(sandbox.call("giveSymbol"))).toMatchObject({ code: "SAND_VM_DATA_CLONE_FAILED" });
  });

  it("names unknown exports and reports plugin throws with their guest stack only", async () => {
    const sandbox = await start(`
      class PluginError extends Error { constructor(m) { super(m); this.name = "PluginError"; this.code = "E_PLUGIN"; } }
      export function boom() { throw new PluginError("bad input"); }
      export function throwsString() { throw "just a string"; }`);
    expect(await failure(sandbox.call("missing"))).toEqual({
      name: "VmSandboxError",
      code: "SAND_VM_EXPORT_NOT_FOUND",
      message:
        'the plugin has no function export "missing" (SAND_VM_EXPORT_NOT_FOUND); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_EXPORT_NOT_FOUND.md',
      details: { name: "missing", exports: ["boom", "throwsString"] },
    });
    expect(await failure(sandbox.call("boom"))).toEqual({
      name: "VmSandboxError",
      code: "SAND_VM_PLUGIN_THREW",
      message:
        'plugin export "boom" threw PluginError: bad input (SAND_VM_PLUGIN_THREW); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_PLUGIN_THREW.md',
      details: {
        name: "PluginError",
        message: "bad input",
        code: "E_PLUGIN",
        guestStack: "PluginError: bad input\n    at boom (sandbox:/plugin/plugin.mjs:3:38)",
      },
    });
    expect(await failure(sandbox.call("throwsString"))).toMatchObject({
      code: "SAND_VM_PLUGIN_THREW",
      message:
        "plugin export \"throwsString\" threw a non-error value: 'just a string' (SAND_VM_PLUGIN_THREW); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_PLUGIN_THREW.md",
    });
  });

  it("routes the plugin's console to onLog", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({
      "plugin.mjs": `export function talk() { console.log("hello", { n: 1 }); console.warn("careful"); console.error(new Error("oops").message); console.debug(() => 1); return "done"; }`,
    });
    const logs: unknown[] = [];
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: {},
      onLog: (entry) => logs.push(entry),
    });
    expect(await sandbox.call("talk")).toBe("done");
    expect(logs).toEqual([
      { level: "log", message: "hello { n: 1 }" },
      { level: "warn", message: "careful" },
      { level: "error", message: "oops" },
      { level: "debug", message: "[Function (anonymous)]" },
    ]);
  });

  it("logs arguments node's formatter cannot convert (%d of an object whose toString and valueOf were functions) and stays usable", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({
      "plugin.mjs": `export function talk() { console.log("%d %i %f!", { toString() { return "x"; }, valueOf() { return "y"; } }, { toString() {}, valueOf() {} }, {}); return "logged"; }`,
    });
    const logs: unknown[] = [];
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: {},
      onLog: (entry) => logs.push(entry),
    });
    expect([await sandbox.call("talk"), await sandbox.call("talk")]).toEqual(["logged", "logged"]);
    const line = { level: "log", message: "NaN NaN NaN!" };
    expect(logs).toEqual([line, line]);
  });

  it("validates options and the policy, naming the field", async () => {
    expect(await failure(createVmSandbox({ pluginModulePath: "", policy: {} }))).toMatchObject({
      code: "SAND_VM_INVALID_OPTIONS",
      message:
        "Invalid createVmSandbox options: options.pluginModulePath must be a non-empty path string (SAND_VM_INVALID_OPTIONS); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_INVALID_OPTIONS.md",
    });
    expect(
      await failure(createVmSandbox({ pluginModulePath: "/x.mjs", policy: {}, timeoutMs: 0 })),
    ).toMatchObject({
      code: "SAND_VM_INVALID_OPTIONS",
      details: { field: "options.timeoutMs" },
    });
    expect(
      await failure(
        createVmSandbox({
          pluginModulePath: "/x.mjs",
          policy: { fs: [{ path: "/a", access: "rw" }] } as never,
        }),
      ),
    ).toMatchObject({
      code: "PERMISSION_INVALID_POLICY",
      details: { field: "policy.fs[0].access" },
    });
  });

  it("fails to load missing, unparsable and escaping entry modules with coded errors", async () => {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "vm-sandbox-load-")));
    const outside = await realpath(await mkdtemp(join(tmpdir(), "vm-sandbox-outside-")));
    try {
      await writeFile(join(dir, "broken.mjs"), "export const = ;");
      await writeFile(join(outside, "real.mjs"), "export const x = 1;");
      await symlink(join(outside, "real.mjs"), join(dir, "link.mjs"));
      const results = await Promise.all(
        ["missing.mjs", "broken.mjs", "link.mjs"].map(
          async (name) =>
            (await failure(createVmSandbox({ pluginModulePath: join(dir, name), policy: {} }))).code,
        ),
      );
      expect(results).toEqual([
        "SAND_VM_MODULE_LOAD_FAILED",
        "SAND_VM_MODULE_LOAD_FAILED",
        "SAND_VM_MODULE_IMPORT_FORBIDDEN",
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    }
    env = createConformanceEnv(createVmSandbox);
  });

  it("a plugin that exhausts its heap ends with SAND_VM_MEMORY_EXCEEDED", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({
      "plugin.mjs":
        "export function hog() { const keep = []; for (;;) keep.push(new Array(1e5).fill(keep.length)); }",
    });
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: {},
      memoryLimitMb: 16,
      timeoutMs: 20_000,
    });
    expect((await failure(sandbox.call("hog"))).code).toBe("SAND_VM_MEMORY_EXCEEDED");
    expect(sandbox.disposed).toBe(true);
  });

  it("supports await using", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({ "plugin.mjs": "export const one = () => 1;" });
    let handle: VmSandboxHandle | undefined;
    {
      await using sandbox = await createVmSandbox({ pluginModulePath: entry, policy: {} });
      handle = sandbox;
      expect(await sandbox.call("one")).toBe(1);
    }
    expect(handle.disposed).toBe(true);
  });
});
