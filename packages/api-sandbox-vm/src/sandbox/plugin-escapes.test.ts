// Adversarial review: a hostile plugin attacks the host through the public API only. Every test
// starts a real sandbox (worker + vm context) on real temp files; nothing is mocked.
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
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

/**
 * Plugin-side probe: describes a caught value without trusting it. `guestRealm` is true when the
 * value's prototype chain ends at this realm's Object.prototype; `host` is what the value's
 * constructor's constructor can reach (a host Function would compile `typeof process`).
 */
const PROBE = `
function probe(e) {
  let proto = e, guestRealm = false;
  try { while (proto !== null && typeof proto === "object" || typeof proto === "function") { if (proto === Object.prototype) { guestRealm = true; break; } proto = Object.getPrototypeOf(proto); } } catch {}
  let host = "unreachable";
  try { host = String(e.constructor.constructor("return typeof process")()); } catch {}
  return { guestRealm, host, code: e && e.code, message: String(e && e.message) };
}`;

describe("dynamic import() never hands the plugin a host-realm object", () => {
  it("a second import() of a module whose link failed rejects with a guest error, not the host's link error", async () => {
    const sandbox = await start({
      "plugin.mjs": `${PROBE}
        export async function twice() {
          const out = [];
          for (let i = 0; i < 3; i++) {
            try { await import("./bad.mjs"); out.push("loaded"); } catch (e) { out.push(probe(e)); }
          }
          return out;
        }`,
      "bad.mjs": `import "node:fs";`,
    });
    const results = (await sandbox.call("twice")) as { guestRealm: boolean; host: string; code: string }[];
    expect(results).toHaveLength(3);
    for (const result of results) {
      expect(result.guestRealm).toBe(true);
      expect(result.host).toBe("unreachable");
      expect(result.code).toBe("SAND_VM_MODULE_IMPORT_FORBIDDEN");
    }
  });

  it("import() of a module that an importer whose dependency failed to link rejects with a guest error", async () => {
    const sandbox = await start({
      "plugin.mjs": `${PROBE}
        export async function run() {
          const out = [];
          for (const s of ["./bad.mjs", "./uses-bad.mjs", "./uses-bad.mjs"]) {
            try { await import(s); out.push("loaded"); } catch (e) { out.push(probe(e)); }
          }
          return out;
        }`,
      "bad.mjs": `import "node:fs";`,
      "uses-bad.mjs": `import "./bad.mjs"; export const x = 1;`,
    });
    const results = (await sandbox.call("run")) as { guestRealm: boolean; host: string }[];
    for (const result of results) {
      expect(result.guestRealm).toBe(true);
      expect(result.host).toBe("unreachable");
    }
  });

  it("import() of a module that is still linking (as another import's dependency) waits instead of leaking ERR_VM_MODULE_STATUS", async () => {
    env = createConformanceEnv(createVmSandbox);
    const { dir, entry } = await env.plugin({
      "plugin.mjs": `${PROBE}
        export async function race() {
          const first = import("./a.mjs");
          // Each denied fs call is one round trip to the host: by the end, a's graph is linking and
          // blocked on reading c.mjs (a FIFO the test fills later), so b is cached but "linking".
          for (let i = 0; i < 10; i++) { try { await fs.stat("nope"); } catch {} }
          let second;
          try { second = (await import("./b.mjs")).b; } catch (e) { second = probe(e); }
          return { second, a: (await first).a };
        }`,
      "a.mjs": `import { b } from "./b.mjs"; export const a = b;`,
      "b.mjs": `import { c } from "./c.mjs"; export const b = c;`,
    });
    const fifo = join(dir, "c.mjs");
    execFileSync("mkfifo", [fifo]);
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {}, timeoutMs: 10_000 });
    const result = sandbox.call("race");
    await new Promise((resolve) => setTimeout(resolve, 500));
    await writeFile(fifo, "export const c = 7;\n");
    expect(await result).toEqual({ second: 7, a: 7 });
  });

  it("concurrent import() of the same file evaluates it once", async () => {
    const sandbox = await start({
      "plugin.mjs": `
        export async function run() {
          const [x, y] = await Promise.all([import("./counter.mjs"), import("./counter.mjs")]);
          return [x === y, x.id, y.id];
        }`,
      "counter.mjs": `export const id = Math.random();`,
    });
    const [same, first, second] = (await sandbox.call("run")) as [boolean, number, number];
    expect(first).toBe(second);
    expect(same).toBe(true);
  });
});
