import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVmSandbox, type VmSandboxHandle } from "../sandbox/create-vm-sandbox.js";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";
import { EXPECTED_GLOBAL_NAMES } from "../testing/conformance-scenarios.js";
import { FROZEN_GLOBALS } from "./frozen-globals.js";

// Differential tests: the same module runs inside the sandbox (guest-realm FrozenGlobals) and on
// the host (Node's own URL, TextDecoder, crypto, structuredClone); the answers must be identical.
const PROBES = `
const outcome = (fn) => { try { return { value: fn() }; } catch (e) { return { threw: e.name }; } };
const hex = (bytes) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

export function url() {
  const u = new URL("../a b/ü?x=1&y=2#frag", "https://User:Pw@Bücher.Example:8443/dir/page");
  const parts = ["href", "origin", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"].map((k) => u[k]);
  u.searchParams.append("z", "3 4");
  const afterAppend = u.href;
  u.search = "?q=new";
  const afterSearch = [u.searchParams.get("q"), u.searchParams.size];
  u.pathname = "/p/../q";
  u.port = "443";
  u.hash = "";
  return { parts, afterAppend, afterSearch, final: u.toJSON(), canParse: [URL.canParse("nope"), URL.canParse("/x", "http://h")], invalid: outcome(() => new URL("http://[::1")) };
}

export function searchParams() {
  const p = new URLSearchParams("?a=1&b=%20two+three&a=3&c");
  p.append("d", "é&=");
  p.set("a", "one");
  p.delete("c");
  p.sort();
  return {
    text: p.toString(),
    entries: [...p],
    get: [p.get("a"), p.get("missing"), p.getAll("b"), p.has("d"), p.size],
    fromRecord: new URLSearchParams({ k: "v w", n: 1 }).toString(),
    fromPairs: new URLSearchParams([["x", "1"], ["x", "2"]]).toString(),
  };
}

export function text() {
  const enc = new TextEncoder();
  const into = new Uint8Array(5);
  const decoder = new TextDecoder();
  const streamed = decoder.decode(new Uint8Array([0xe2, 0x82]), { stream: true }) + decoder.decode(new Uint8Array([0xac]));
  return {
    encoded: Array.from(enc.encode("a€😀\\uD800z")),
    encodeInto: enc.encodeInto("a€😀", into),
    intoBytes: Array.from(into),
    replaced: new TextDecoder().decode(new Uint8Array([0x61, 0xff, 0xe2, 0x82, 0x62, 0xf0, 0x9f, 0x98])),
    bom: [new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))],
    fatal: outcome(() => new TextDecoder("utf8", { fatal: true }).decode(new Uint8Array([0xc3]))),
    streamed,
    encoding: [enc.encoding, decoder.encoding],
  };
}

export async function cryptoSubset() {
  const filled = crypto.getRandomValues(new Uint32Array(4));
  return {
    length: filled.length,
    uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
    sha256: hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode("abc"))),
    sha1: hex(await crypto.subtle.digest({ name: "SHA-1" }, new Uint8Array([1, 2, 3]))),
    tooMany: outcome(() => crypto.getRandomValues(new Uint8Array(65537))),
    floats: outcome(() => crypto.getRandomValues(new Float32Array(1))),
  };
}

export function clone() {
  const source = { m: new Map([[1, new Set(["x"])]]), d: new Date(5), big: 10n, bytes: new Int16Array([-2, 7]) };
  source.self = source;
  const copy = structuredClone(source);
  return {
    equalShape: copy.m.get(1).has("x") && copy.d.getTime() === 5 && copy.big === 10n && copy.bytes[0] === -2,
    cycle: copy.self === copy,
    distinct: copy !== source && copy.m !== source.m,
    fn: outcome(() => structuredClone({ f() {} })),
    symbol: outcome(() => structuredClone(Symbol("s"))),
  };
}

export function prototypes() {
  class Sub extends Map {}
  const disguised = Object.setPrototypeOf(new Map([[1, 2]]), Object.prototype);
  const bare = Object.assign(Object.create(null), { a: 1 });
  const copy = structuredClone({ sub: new Sub([[1, 2]]), disguised, bare });
  return {
    sub: [copy.sub instanceof Map, copy.sub.get(1)],
    disguised: copy.disguised instanceof Map,
    bare: [Object.keys(copy.bare), Object.getPrototypeOf(copy.bare) === Object.prototype],
  };
}
`;

let env: ConformanceEnv;
let sandbox: VmSandboxHandle;
let host: Record<string, () => unknown>;
beforeAll(async () => {
  env = createConformanceEnv(createVmSandbox);
  const { entry } = await env.plugin({ "plugin.mjs": PROBES });
  sandbox = await env.sandbox({ pluginModulePath: entry, policy: {} });
  host = (await import(pathToFileURL(entry).href)) as Record<string, () => unknown>;
});
afterAll(async () => {
  await env.cleanup();
});

describe("FrozenGlobals behave like the platform's", () => {
  it("structuredClone copies an ordinary object without brand checks: a Map given Object.prototype is copied as the plain object it claims to be (the platform keeps it a Map)", async () => {
    const platform = { sub: [true, 2], disguised: true, bare: [["a"], true] };
    expect({ sandbox: await sandbox.call("prototypes"), host: await host.prototypes?.() }).toEqual({
      sandbox: { ...platform, disguised: false },
      host: platform,
    });
  });

  for (const probe of ["url", "searchParams", "text", "cryptoSubset", "clone"]) {
    it(`${probe} gives the same answers inside the sandbox as on the host`, async () => {
      expect(await sandbox.call(probe)).toEqual(await host[probe]?.());
    });
  }

  it("the allowlist is exactly URL, URLSearchParams, TextEncoder, TextDecoder, structuredClone, console, crypto", () => {
    expect([...FROZEN_GLOBALS]).toEqual([
      "URL",
      "URLSearchParams",
      "TextEncoder",
      "TextDecoder",
      "structuredClone",
      "console",
      "crypto",
    ]);
    expect(FROZEN_GLOBALS.every((name) => EXPECTED_GLOBAL_NAMES.includes(name))).toBe(true);
  });
});
