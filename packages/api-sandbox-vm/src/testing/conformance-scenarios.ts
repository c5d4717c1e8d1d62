import { join } from "node:path";
import { expect } from "vitest";
import type { FsHostAdapter } from "../proxies/fs-proxy/fs-proxy.js";
import { createNodeFsAdapter } from "../proxies/fs-proxy/fs-proxy.js";
import type { ConformanceEnv } from "./conformance-env.js";

/** One contract scenario every vm plugin host must pass. */
export interface VmConformanceScenario {
  readonly group: string;
  readonly name: string;
  run(env: ConformanceEnv): Promise<void>;
}

/** Thrown-error facts a plugin reports back (guest side). */
const REPORT = `
export function report(e) {
  return { name: e?.name, code: e?.code, guest: e instanceof Error };
}`;

/** The ES intrinsics plus the FrozenGlobals: the exact own property names of a plugin's globalThis. */
export const EXPECTED_GLOBAL_NAMES: readonly string[] = [
  "AggregateError",
  "Array",
  "ArrayBuffer",
  "BigInt",
  "BigInt64Array",
  "BigUint64Array",
  "Boolean",
  "DataView",
  "Date",
  "Error",
  "EvalError",
  "Float32Array",
  "Float64Array",
  "Function",
  "Infinity",
  "Int16Array",
  "Int32Array",
  "Int8Array",
  "Intl",
  "JSON",
  "Map",
  "Math",
  "NaN",
  "Number",
  "Object",
  "Promise",
  "Proxy",
  "RangeError",
  "ReferenceError",
  "Reflect",
  "RegExp",
  "Set",
  "String",
  "Symbol",
  "SyntaxError",
  "TextDecoder",
  "TextEncoder",
  "TypeError",
  "URIError",
  "URL",
  "URLSearchParams",
  "Uint16Array",
  "Uint32Array",
  "Uint8Array",
  "Uint8ClampedArray",
  "WeakMap",
  "WeakRef",
  "WeakSet",
  "console",
  "crypto",
  "decodeURI",
  "decodeURIComponent",
  "encodeURI",
  "encodeURIComponent",
  "escape",
  "eval",
  "fetch",
  "fs",
  "globalThis",
  "isFinite",
  "isNaN",
  "parseFloat",
  "parseInt",
  "structuredClone",
  "undefined",
  "unescape",
];

async function rejection(
  promise: Promise<unknown>,
): Promise<{ name: string; code: unknown; message: string; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { name: string; code?: unknown; message: string; details?: unknown };
    return { name: e.name, code: e.code, message: e.message, details: e.details };
  }
  throw new Error("expected a rejection");
}

/** An fs adapter that forwards to the real one and records every call. */
export function countingFsAdapter(): { adapter: FsHostAdapter; calls: { op: string; path: string }[] } {
  const real = createNodeFsAdapter();
  const calls: { op: string; path: string }[] = [];
  return {
    calls,
    adapter: {
      read(path, signal) {
        calls.push({ op: "read", path });
        return real.read(path, signal);
      },
      write(path, data, signal) {
        calls.push({ op: "write", path });
        return real.write(path, data, signal);
      },
      list(path, signal) {
        calls.push({ op: "list", path });
        return real.list(path, signal);
      },
      stat(path, signal) {
        calls.push({ op: "stat", path });
        return real.stat(path, signal);
      },
    },
  };
}

const PROCESS_UNREACHABLE: VmConformanceScenario = {
  group: "frozen context",
  name: "process global is unreachable inside sandbox",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": `
        export function kinds() { return [typeof process, typeof Buffer, typeof require, typeof module, typeof setTimeout]; }
        export function pid() { return process.pid; }`,
      "top-level.mjs": "export const pid = process.pid;",
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    expect(await sandbox.call("kinds")).toEqual([
      "undefined",
      "undefined",
      "undefined",
      "undefined",
      "undefined",
    ]);
    expect(await rejection(sandbox.call("pid"))).toEqual({
      name: "VmSandboxError",
      code: "SAND_VM_PLUGIN_THREW",
      message:
        'plugin export "pid" threw ReferenceError: process is not defined (SAND_VM_PLUGIN_THREW); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_PLUGIN_THREW.md',
      details: expect.objectContaining({ name: "ReferenceError", message: "process is not defined" }),
    });
    const topLevel = await rejection(
      env.sandbox({ pluginModulePath: join(entry, "../top-level.mjs"), policy: {} }),
    );
    expect([topLevel.code, topLevel.message]).toEqual([
      "SAND_VM_PLUGIN_THREW",
      "the plugin module threw ReferenceError: process is not defined (SAND_VM_PLUGIN_THREW); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_PLUGIN_THREW.md",
    ]);
  },
};

const GLOBAL_FROZEN: VmConformanceScenario = {
  group: "frozen context",
  name: "globalThis is frozen",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": `
        const attempt = (fn) => { try { fn(); return "no error"; } catch (e) { return e instanceof TypeError ? "TypeError" : String(e); } };
        export function probe() {
          return {
            assign: attempt(() => { globalThis.foo = 1; }),
            define: attempt(() => Object.defineProperty(globalThis, "bar", { value: 1 })),
            replace: attempt(() => { globalThis.URL = null; }),
            remove: attempt(() => { delete globalThis.console; }),
            intrinsic: attempt(() => { Array.prototype.push = null; }),
            added: ["foo", "bar"].filter((k) => k in globalThis),
            frozen: Object.isFrozen(globalThis),
            sealed: Object.isSealed(globalThis),
            urlIntact: typeof URL,
          };
        }
        export function assign() { globalThis.foo = 1; }`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    expect(await sandbox.call("probe")).toEqual({
      assign: "TypeError",
      define: "TypeError",
      replace: "TypeError",
      remove: "TypeError",
      intrinsic: "TypeError",
      added: [],
      frozen: true,
      sealed: true,
      urlIntact: "function",
    });
    expect((await rejection(sandbox.call("assign"))).code).toBe("SAND_VM_PLUGIN_THREW");
  },
};

const ALLOWLIST: VmConformanceScenario = {
  group: "frozen context",
  name: "only the ECMAScript intrinsics and the FrozenGlobals allowlist are exposed",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": "export const names = () => Object.getOwnPropertyNames(globalThis).sort();",
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    expect(await sandbox.call("names")).toEqual([...EXPECTED_GLOBAL_NAMES].sort());
  },
};

const DIRECT_EVAL: VmConformanceScenario = {
  group: "dynamic code",
  name: "direct dynamic execution is rejected",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": `${REPORT}
        export function inside() {
          const out = [];
          try { eval("1 + 1"); } catch (e) { out.push(report(e)); }
          try { Function("return 1"); } catch (e) { out.push(report(e)); }
          try { new Function("return 1"); } catch (e) { out.push(report(e)); }
          return out;
        }
        export function uncaught() { return eval("1 + 1"); }`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    const rejected = { name: "SuaveplanError", code: "SAND_VM_EVAL_REJECTED", guest: true };
    expect(await sandbox.call("inside")).toEqual([rejected, rejected, rejected]);
    const host = await rejection(sandbox.call("uncaught"));
    expect([host.name, host.code, host.message]).toEqual([
      "VmSandboxError",
      "SAND_VM_EVAL_REJECTED",
      "eval is disabled in this sandbox: code generation from strings is rejected (SAND_VM_EVAL_REJECTED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_EVAL_REJECTED.md",
    ]);
  },
};

const INDIRECT_EVAL: VmConformanceScenario = {
  group: "dynamic code",
  name: "indirect dynamic execution is rejected",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": `${REPORT}
        const attempts = {
          comma: () => (0, eval)("1 + 1"),
          member: () => globalThis.eval("1 + 1"),
          optional: () => eval?.("1 + 1"),
          reflect: () => Reflect.apply(eval, undefined, ["1 + 1"]),
          fnConstructor: () => (function () {}).constructor("return 1"),
          asyncFunction: () => (async function () {}).constructor("return 1"),
          generatorFunction: () => Object.getPrototypeOf(function* () {}).constructor("yield 1"),
          asyncGeneratorFunction: () => Object.getPrototypeOf(async function* () {}).constructor("yield 1"),
        };
        export function inside() {
          const out = {};
          for (const [k, fn] of Object.entries(attempts)) { try { fn(); out[k] = "no error"; } catch (e) { out[k] = report(e); } }
          return out;
        }
        export function uncaught() { return (0, eval)("1 + 1"); }`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    const rejected = { name: "SuaveplanError", code: "SAND_VM_INDIRECT_EVAL_REJECTED", guest: true };
    expect(await sandbox.call("inside")).toEqual({
      comma: rejected,
      member: rejected,
      optional: rejected,
      reflect: rejected,
      fnConstructor: rejected,
      asyncFunction: rejected,
      generatorFunction: rejected,
      asyncGeneratorFunction: rejected,
    });
    expect((await rejection(sandbox.call("uncaught"))).code).toBe("SAND_VM_INDIRECT_EVAL_REJECTED");
  },
};

/** Classic constructor-chain escape from a guest value; resolves what the plugin observed. */
const CHAIN = `
export function chain(value) {
  try {
    const F = value.constructor.constructor;
    const got = F("return process")();
    return { escaped: true, got: typeof got };
  } catch (e) {
    return { escaped: false, code: e.code, guestError: e instanceof Error };
  }
}`;
const BLOCKED = { escaped: false, code: "SAND_VM_INDIRECT_EVAL_REJECTED", guestError: true };

const CHAIN_PLAIN: VmConformanceScenario = {
  group: "membrane escapes",
  name: "constructor chain from a plain object reaches no host Function",
  async run(env) {
    env.assertions(1);
    const { entry } = await env.plugin({
      "plugin.mjs": `${CHAIN}
        export const probe = () => [chain({}), chain([]), chain(() => 1), chain(Promise.resolve()), chain(new Error("x"))];`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    expect(await sandbox.call("probe")).toEqual([BLOCKED, BLOCKED, BLOCKED, BLOCKED, BLOCKED]);
  },
};

const CHAIN_STUBS: VmConformanceScenario = {
  group: "membrane escapes",
  name: "constructor chain from proxy functions and FrozenGlobals reaches no host Function",
  async run(env) {
    env.assertions(1);
    const { entry } = await env.plugin({
      "plugin.mjs": `${CHAIN}
        export const probe = () => [fs.read, fs, fetch, console.log, crypto.getRandomValues, crypto.subtle.digest, URL, structuredClone, TextEncoder].map(chain);`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    expect(await sandbox.call("probe")).toEqual(Array(9).fill(BLOCKED));
  },
};

const CHAIN_ERRORS: VmConformanceScenario = {
  group: "membrane escapes",
  name: "errors raised by the host arrive as guest-realm errors",
  async run(env) {
    env.assertions(2);
    const { entry } = await env.plugin({
      "plugin.mjs": `${CHAIN}
        const caught = async (fn) => { try { await fn(); } catch (e) { return e; } return undefined; };
        // Stack exhaustion: call into the host bridge with almost no stack left, keep what it throws.
        const atLimit = [];
        const exhaust = () => { try { exhaust(); } catch { try { crypto.randomUUID(); } catch (e) { atLimit.push(e); } } };
        export async function probe() {
          exhaust();
          const errors = [
            await caught(() => fs.read("/etc/passwd")),
            await caught(() => fetch("http://127.0.0.1:9/")),
            await caught(() => new URL("not a url")),
            await caught(() => import("node:fs")),
            atLimit[0],
          ];
          return { kinds: errors.map((e) => e instanceof Error), chains: errors.map(chain) };
        }`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    const result = (await sandbox.call("probe")) as { kinds: boolean[]; chains: unknown[] };
    expect(result.kinds).toEqual([true, true, true, true, true]);
    expect(result.chains).toEqual(Array(5).fill(BLOCKED));
  },
};

const CHAIN_PROMISES: VmConformanceScenario = {
  group: "membrane escapes",
  name: "promises and values from proxy calls are guest-realm objects",
  async run(env) {
    env.assertions(1);
    const { entry } = await env.plugin({
      "plugin.mjs": `${CHAIN}
        export async function probe() {
          const read = fs.read("data.txt");
          const stat = fs.stat("data.txt");
          const dynamic = import("./other.mjs");
          const bytes = await read;
          const info = await stat;
          const namespace = await dynamic;
          const seen = [];
          await read.then((v) => seen.push(v instanceof Uint8Array));
          return {
            promises: [read, stat, dynamic].map((p) => p instanceof Promise),
            values: [bytes instanceof Uint8Array, Object.getPrototypeOf(info) === Object.prototype, seen[0]],
            chains: [read, stat, dynamic, bytes, info, namespace.value, read.then].map(chain),
          };
        }`,
      "other.mjs": "export const value = { x: 1 };",
      "data.txt": "data",
    });
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: { fs: [{ path: "data.txt", access: "read" }] },
    });
    expect(await sandbox.call("probe")).toEqual({
      promises: [true, true, true],
      values: [true, true, true],
      chains: Array(7).fill(BLOCKED),
    });
  },
};

const STACK_TRACE_API: VmConformanceScenario = {
  group: "membrane escapes",
  name: "Error.prepareStackTrace cannot be replaced and stacks list plugin frames only",
  async run(env) {
    env.assertions(2);
    const { entry } = await env.plugin({
      "plugin.mjs": `
        export async function probe() {
          let replaced;
          try { Error.prepareStackTrace = (e, sites) => sites.map((s) => s.getThis()); replaced = "replaced"; } catch (e) { replaced = e.constructor === TypeError ? "TypeError" : "other"; }
          const holder = {};
          Error.captureStackTrace(holder);
          let denied;
          try { await fs.read("/etc/passwd"); } catch (e) { denied = e; }
          const stacks = [holder.stack, new Error("here").stack, denied.stack];
          return { replaced, limit: Object.isFrozen(Error), stacks };
        }`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    const result = (await sandbox.call("probe")) as { replaced: string; limit: boolean; stacks: string[] };
    expect({ replaced: result.replaced, limit: result.limit }).toEqual({
      replaced: "TypeError",
      limit: true,
    });
    const frames = result.stacks.flatMap((stack) => stack.split("\n").slice(1));
    expect(
      frames.filter((frame) => !/^ {4}at (?:\S+ \()?sandbox:\/plugin\/plugin\.mjs:\d+:\d+\)?$/u.test(frame)),
    ).toEqual([]);
  },
};

const NODE_BUILTINS: VmConformanceScenario = {
  group: "modules",
  name: "node built-in imports are forbidden",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": 'import { readFileSync } from "node:fs";\nexport const x = readFileSync;',
      "dynamic.mjs": `${REPORT}
        export async function load(specifier) { try { await import(specifier); return "loaded"; } catch (e) { return report(e); } }`,
    });
    const staticImport = await rejection(env.sandbox({ pluginModulePath: entry, policy: {} }));
    expect([staticImport.name, staticImport.code]).toEqual([
      "VmSandboxError",
      "SAND_VM_MODULE_IMPORT_FORBIDDEN",
    ]);
    const sandbox = await env.sandbox({ pluginModulePath: join(entry, "../dynamic.mjs"), policy: {} });
    const forbidden = { name: "SuaveplanError", code: "SAND_VM_MODULE_IMPORT_FORBIDDEN", guest: true };
    expect(
      await Promise.all(["node:fs", "fs", "node:child_process"].map((s) => sandbox.call("load", s))),
    ).toEqual([forbidden, forbidden, forbidden]);
  },
};

const MODULE_GRAPH: VmConformanceScenario = {
  group: "modules",
  name: "only relative imports inside the plugin folder load, also after symlink resolution",
  async run(env) {
    const outside = await env.plugin({ "evil.mjs": "export const evil = true;" });
    const { entry } = await env.plugin(
      {
        "plugin.mjs": `${REPORT}
          import { helper } from "./lib/helper.mjs";
          export const meta = () => import.meta.url;
          export const useHelper = () => helper();
          export async function load(specifier) { try { const ns = await import(specifier); return Object.keys(ns); } catch (e) { return report(e); } }`,
        "lib/helper.mjs": 'import { base } from "../base.mjs";\nexport const helper = () => base + 1;',
        "base.mjs": "export const base = 41;",
        "lazy.mjs": "export const lazy = 1;",
      },
      { "escape.mjs": join(outside.dir, "evil.mjs") },
    );
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
    const forbidden = { name: "SuaveplanError", code: "SAND_VM_MODULE_IMPORT_FORBIDDEN", guest: true };
    expect({
      meta: await sandbox.call("meta"),
      helper: await sandbox.call("useHelper"),
      lazy: await sandbox.call("load", "./lazy.mjs"),
      symlinkOut: await sandbox.call("load", "./escape.mjs"),
      parent: await sandbox.call("load", `../${outside.dir.split("/").pop()}/evil.mjs`),
      absolute: await sandbox.call("load", join(outside.dir, "evil.mjs")),
      fileUrl: await sandbox.call("load", `file://${join(outside.dir, "evil.mjs")}`),
      data: await sandbox.call("load", "data:text/javascript,export const x = 1"),
      bare: await sandbox.call("load", "left-pad"),
    }).toEqual({
      meta: "sandbox:/plugin/plugin.mjs",
      helper: 42,
      lazy: ["lazy"],
      symlinkOut: forbidden,
      parent: forbidden,
      absolute: forbidden,
      fileUrl: forbidden,
      data: forbidden,
      bare: forbidden,
    });
  },
};

const FS_ALLOWED_READ: VmConformanceScenario = {
  group: "capability proxies",
  name: "allowed read proxies once to host",
  async run(env) {
    const { dir, entry } = await env.plugin({
      "plugin.mjs": "export const read = (p) => fs.read(p, 'utf8');",
      "data/greeting.txt": "hello from the host",
    });
    const counting = countingFsAdapter();
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: { fs: [{ path: "data/**", access: "read" }] },
      proxies: { fs: counting.adapter, fetch: false },
    });
    expect(await sandbox.call("read", "data/greeting.txt")).toBe("hello from the host");
    expect(counting.calls).toEqual([{ op: "read", path: join(dir, "data/greeting.txt") }]);
  },
};

const FS_DENIED: VmConformanceScenario = {
  group: "capability proxies",
  name: "denied fs calls raise PERMISSION_DENIED inside the sandbox without touching the host adapter",
  async run(env) {
    const outside = await env.plugin({ "secret.txt": "secret" });
    const { entry } = await env.plugin(
      {
        "plugin.mjs": `${REPORT}
          const attempt = async (fn) => { try { await fn(); return "allowed"; } catch (e) { return report(e); } };
          export const probe = () => Promise.all([
            attempt(() => fs.read("data/../plugin.mjs")),
            attempt(() => fs.read("data/link/secret.txt")),
            attempt(() => fs.write("data/new.txt", "x")),
            attempt(() => fs.list("..")),
          ]);`,
        "data/a.txt": "a",
      },
      { "data/link": outside.dir },
    );
    const counting = countingFsAdapter();
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: { fs: [{ path: "data/**", access: "read" }] },
      proxies: { fs: counting.adapter },
      meterProvider: env.metrics.meterProvider,
    });
    const denied = { name: "SuaveplanError", code: "PERMISSION_DENIED", guest: true };
    expect(await sandbox.call("probe")).toEqual([denied, denied, denied, denied]);
    expect(counting.calls).toEqual([]);
    expect(await env.metrics.read()).toEqual({ fs: 4 });
  },
};

const FETCH_DENIED: VmConformanceScenario = {
  group: "capability proxies",
  name: "denied fetch never contacts host AND increments denial metric",
  async run(env) {
    const server = await env.server();
    const { entry } = await env.plugin({
      "plugin.mjs": `${REPORT}
        export async function get(url) { try { await fetch(url); return "fetched"; } catch (e) { return report(e); } }`,
    });
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: { fetch: ["allowed.example"] },
      meterProvider: env.metrics.meterProvider,
    });
    expect(await sandbox.call("get", `${server.origin}/secret`)).toEqual({
      name: "SuaveplanError",
      code: "PERMISSION_DENIED",
      guest: true,
    });
    expect(server.requests).toEqual([]);
    expect(await env.metrics.read()).toEqual({ fetch: 1 });
  },
};

const FETCH_ALLOWED: VmConformanceScenario = {
  group: "capability proxies",
  name: "allowed fetch returns the response; redirects and userinfo tricks to other hosts are refused",
  async run(env) {
    const other = await env.server();
    const server = await env.server((request, response) => {
      if (request.url === "/hop") response.writeHead(302, { location: `${other.origin}/stolen` }).end();
      else
        response
          .writeHead(201, { "x-answer": "42", "content-type": "application/json" })
          .end(JSON.stringify({ ok: true }));
    });
    const { entry } = await env.plugin({
      "plugin.mjs": `${REPORT}
        export async function get(url) {
          try {
            const r = await fetch(url, { method: "POST", body: "hi", headers: { "x-plugin": "1" } });
            return { status: r.status, ok: r.ok, answer: r.headers.get("x-answer"), body: await r.json() };
          } catch (e) { return report(e); }
        }`,
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: { fetch: [server.origin] } });
    const host = server.origin.slice("http://".length);
    expect({
      allowed: await sandbox.call("get", `${server.origin}/data`),
      redirect: await sandbox.call("get", `${server.origin}/hop`),
      userinfo: await sandbox.call("get", `http://${host}@${other.origin.slice("http://".length)}/`),
    }).toEqual({
      allowed: { status: 201, ok: true, answer: "42", body: { ok: true } },
      redirect: { name: "SuaveplanError", code: "PERMISSION_DENIED", guest: true },
      userinfo: { name: "SuaveplanError", code: "PERMISSION_DENIED", guest: true },
    });
    expect({ server: server.requests, other: other.requests }).toEqual({
      server: [
        { method: "POST", url: "/data" },
        { method: "POST", url: "/hop" },
      ],
      other: [],
    });
  },
};

const CALL_TIMEOUT: VmConformanceScenario = {
  group: "lifecycle",
  name: "every call has a timeout and the sandbox stays usable after a pending promise times out",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": "export const hang = () => new Promise(() => {});\nexport const ping = () => 'pong';",
    });
    const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {}, timeoutMs: 1_000 });
    const timedOut = await rejection(sandbox.call("hang"));
    expect([timedOut.code, timedOut.message]).toEqual([
      "SAND_VM_TIMEOUT",
      'plugin export "hang" did not settle within 1000 ms (SAND_VM_TIMEOUT); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_TIMEOUT.md',
    ]);
    expect(await sandbox.call("ping")).toBe("pong");
  },
};

const CPU_TIMEOUT: VmConformanceScenario = {
  group: "lifecycle",
  name: "plugin code that never yields fails the call that ran it; the sandbox is disposed at once and says why",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs": `
        export const spin = () => { for (;;) {} };
        // Two hops, so the loop starts after the call has already answered.
        export const spinLater = () => { Promise.resolve().then(() => null).then(() => { for (;;) {} }); return "queued"; };
        export const ping = () => "pong";`,
    });
    // A synchronous loop, and a microtask loop queued after the call already answered: both fail
    // the call whose code ran them, never the innocent call made next.
    const outcomes = [];
    for (const name of ["spin", "spinLater"]) {
      const sandbox = await env.sandbox({ pluginModulePath: entry, policy: {}, timeoutMs: 1_000 });
      const first = await rejection(sandbox.call(name));
      const disposedAtOnce = sandbox.disposed;
      const next = await rejection(sandbox.call("ping"));
      outcomes.push({ first: [first.code, first.message], disposedAtOnce, next: [next.code, next.message] });
    }
    const stopped =
      "plugin code ran for more than 1000 ms without yielding and was stopped; the sandbox was disposed (SAND_VM_TIMEOUT); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_TIMEOUT.md";
    const gone = (name: string) =>
      `cannot call "ping": the sandbox is disposed (it failed with SAND_VM_TIMEOUT during plugin export "${name}": plugin code ran for more than 1000 ms without yielding and was stopped) (SAND_VM_DISPOSED); see @suaveplan/api-sandbox-vm/docs/errors/SAND_VM_DISPOSED.md`;
    expect(outcomes).toEqual([
      { first: ["SAND_VM_TIMEOUT", stopped], disposedAtOnce: true, next: ["SAND_VM_DISPOSED", gone("spin")] },
      {
        first: ["SAND_VM_TIMEOUT", stopped],
        disposedAtOnce: true,
        next: ["SAND_VM_DISPOSED", gone("spinLater")],
      },
    ]);
  },
};

const DISPOSE_IDEMPOTENT: VmConformanceScenario = {
  group: "lifecycle",
  name: "dispose is idempotent",
  async run(env) {
    const { entry } = await env.plugin({
      "plugin.mjs":
        "export const slow = () => fs.read('data.txt');\nexport const hang = () => new Promise(() => {});",
      "data.txt": "x",
    });
    let aborts = 0;
    let startRead: () => void = () => {};
    const readStarted = new Promise<void>((resolve) => {
      startRead = resolve;
    });
    const blockingFs: FsHostAdapter = {
      ...createNodeFsAdapter(),
      read: (_path, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborts++;
            reject(signal.reason);
          });
          startRead();
        }),
    };
    const sandbox = await env.sandbox({
      pluginModulePath: entry,
      policy: { fs: [{ path: "data.txt", access: "read" }] },
      proxies: { fs: blockingFs },
    });
    const inFlightProxy = rejection(sandbox.call("slow"));
    const inFlight = rejection(sandbox.call("hang"));
    await Promise.race([readStarted, inFlightProxy, inFlight]);
    const first = sandbox.dispose();
    const second = sandbox.dispose();
    expect(second).toBe(first);
    expect(await first).toBeUndefined();
    expect(await sandbox.dispose()).toBeUndefined();
    expect({
      disposed: sandbox.disposed,
      aborts,
      inFlight: (await inFlight).code,
      inFlightProxy: (await inFlightProxy).code,
      after: (await rejection(sandbox.call("hang"))).code,
    }).toEqual({
      disposed: true,
      aborts: 1,
      inFlight: "SAND_VM_DISPOSED",
      inFlightProxy: "SAND_VM_DISPOSED",
      after: "SAND_VM_DISPOSED",
    });
  },
};

/** Every scenario, in the order the harness runs them. */
export const VM_CONFORMANCE_SCENARIOS: readonly VmConformanceScenario[] = Object.freeze([
  PROCESS_UNREACHABLE,
  GLOBAL_FROZEN,
  ALLOWLIST,
  DIRECT_EVAL,
  INDIRECT_EVAL,
  CHAIN_PLAIN,
  CHAIN_STUBS,
  CHAIN_ERRORS,
  CHAIN_PROMISES,
  STACK_TRACE_API,
  NODE_BUILTINS,
  MODULE_GRAPH,
  FS_ALLOWED_READ,
  FS_DENIED,
  FETCH_DENIED,
  FETCH_ALLOWED,
  CALL_TIMEOUT,
  CPU_TIMEOUT,
  DISPOSE_IDEMPOTENT,
]);

/** Look a scenario up by its exact name (spec tests run the same scenario under their own `it`). */
export function vmConformanceScenario(name: string): VmConformanceScenario {
  const scenario = VM_CONFORMANCE_SCENARIOS.find((s) => s.name === name);
  if (scenario === undefined) throw new Error(`no conformance scenario named ${JSON.stringify(name)}`);
  return scenario;
}
