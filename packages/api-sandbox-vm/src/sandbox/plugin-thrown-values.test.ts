// Adversarial review: a hostile plugin attacks the host through the public API only. Every test
// starts a real sandbox (worker + vm context) on real temp files; nothing is mocked.
import { afterEach, describe, expect, it } from "vitest";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";
import { createVmSandbox, type VmSandboxHandle } from "./create-vm-sandbox.js";

let env: ConformanceEnv;
afterEach(async () => {
  await env.cleanup();
});

async function start(
  files: Record<string, string>,
  options: { policy?: object; timeoutMs?: number } = {},
): Promise<VmSandboxHandle> {
  env = createConformanceEnv(createVmSandbox);
  const { entry } = await env.plugin(files);
  return env.sandbox({
    pluginModulePath: entry,
    policy: options.policy ?? {},
    timeoutMs: options.timeoutMs ?? 5_000,
  });
}

describe("values the plugin throws cannot crash or confuse the host", () => {
  for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty", "valueOf"]) {
    it(`an Error named ${JSON.stringify(name)} thrown at load fails createVmSandbox with a coded error (no host crash)`, async () => {
      env = createConformanceEnv(createVmSandbox);
      const { entry } = await env.plugin({
        "plugin.mjs": `const e = new Error("boom"); e.name = ${JSON.stringify(name)}; throw e;`,
      });
      const crashes: unknown[] = [];
      const onCrash = (error: unknown) => crashes.push(error);
      process.on("uncaughtException", onCrash);
      try {
        const error = await env.sandbox({ pluginModulePath: entry, policy: {}, timeoutMs: 3_000 }).then(
          () => undefined,
          (e: unknown) => e as { code?: string; message: string },
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        expect(crashes).toEqual([]);
        expect(error?.code).toBe("SAND_VM_PLUGIN_THREW");
        expect(error?.message).toContain("boom");
      } finally {
        process.off("uncaughtException", onCrash);
      }
    });

    it(`an Error named ${JSON.stringify(name)} thrown by an export rejects with SAND_VM_PLUGIN_THREW`, async () => {
      const sandbox = await start({
        "plugin.mjs": `export function boom() { const e = new TypeError("bad"); e.name = ${JSON.stringify(name)}; throw e; }`,
      });
      const error = (await sandbox.call("boom").catch((e: unknown) => e)) as {
        code: string;
        message: string;
        details: { name: string };
      };
      expect(error.code).toBe("SAND_VM_PLUGIN_THREW");
      expect(error.message).toContain("bad");
      expect(error.details.name).toBe(name);
    });
  }
});

describe("thrown values that cannot cross whole still reach the host", () => {
  it("an error with a function in an own key crosses without it, and copyIssue says so; a thrown function as its text", async () => {
    const sandbox = await start({
      "plugin.mjs": `
        export function withFn() { const e = new Error("has fn"); e.code = "E_RETRY"; e.retry = () => 1; throw e; }
        export function fn() { throw function named() {}; }`,
    });
    const withFn = (await sandbox.call("withFn").catch((e: unknown) => e)) as {
      code: string;
      message: string;
      cause: object;
    };
    expect({ code: withFn.code, message: withFn.message, cause: { ...withFn.cause } }).toEqual({
      code: "SAND_VM_PLUGIN_THREW",
      message: expect.stringContaining('plugin export "withFn" threw Error: has fn'),
      cause: { code: "E_RETRY", copyIssue: "thrown.retry (function) could not be copied out of the sandbox" },
    });
    await expect(sandbox.call("fn")).rejects.toMatchObject({
      code: "SAND_VM_PLUGIN_THREW",
      details: { value: "'[Function: named]'" },
    });
  });
});

describe("values nested deeper than the host's stack", () => {
  const NEST = "let v = 1; for (let i = 0; i < 5000; i++) v = [v];";

  it("a load-time throw whose cause is nested 5000 deep fails createVmSandbox with the error, its cause dropped and why (no host crash)", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { entry } = await env.plugin({
      "plugin.mjs": `${NEST} const e = new Error("deep"); e.cause = v; throw e;`,
    });
    const crashes: unknown[] = [];
    const onCrash = (error: unknown) => crashes.push(error);
    process.on("uncaughtException", onCrash);
    try {
      const error = await env.sandbox({ pluginModulePath: entry, policy: {}, timeoutMs: 3_000 }).then(
        () => undefined,
        (e: unknown) => e as { code?: string; message: string; cause: object },
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(crashes).toEqual([]);
      expect({ code: error?.code, message: error?.message, cause: { ...error?.cause } }).toEqual({
        code: "SAND_VM_PLUGIN_THREW",
        message: expect.stringContaining("the plugin module threw Error: deep"),
        cause: {
          copyIssue: `thrown.cause${"[0]".repeat(29)}… (nested deeper than 1000 levels) could not be copied out of the sandbox`,
        },
      });
    } finally {
      process.off("uncaughtException", onCrash);
    }
  });

  it("a result nested 5000 deep rejects with SAND_VM_DATA_CLONE_FAILED and the sandbox stays usable", async () => {
    const sandbox = await start({
      "plugin.mjs": `export function deep() { ${NEST} return v; } export function ping() { return "pong"; }`,
    });
    await expect(sandbox.call("deep")).rejects.toMatchObject({ code: "SAND_VM_DATA_CLONE_FAILED" });
    expect(await sandbox.call("ping")).toBe("pong");
  });
});
