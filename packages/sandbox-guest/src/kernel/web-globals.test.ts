import { createCipheriv } from "node:crypto";
import { createContext, runInContext } from "node:vm";
import { prepareGuestCode } from "@suaveplan/sandbox-core/code-transformer";
import { installWebGlobals } from "@suaveplan/sandbox-kernel";
import { describe, expect, it } from "vitest";
import { toSandboxResult } from "../outcome/to-sandbox-result.js";
import type { ExecutionRequest } from "../request/execution-request.js";
import { startVmExecution } from "../vm-realm/start-vm-execution.js";
import { buildKernelSource, kernelConfig } from "./kernel-source.js";

/** Run guest code through the whole driver in a fresh node:vm realm; the result without timings. */
async function run(code: string) {
  const prepared = prepareGuestCode(code);
  const request: ExecutionRequest = {
    code: prepared.source,
    shift: prepared.shift,
    contextText: "",
    modulesText: "",
    sourceModules: [],
    timeoutMs: 2_000,
    maxOutputSize: 1024 * 1024,
    maxLogLines: 10_000,
    maxTimers: 100,
    maxTimerCreations: 1_000,
    maxResultBytes: 64 * 1024 * 1024,
    maxCallBytes: 1024 * 1024,
  };
  const ended = await startVmExecution(request).result;
  const { duration: _d, memoryUsed: _m, usage: _u, ...rest } = toSandboxResult(ended.outcome, ended);
  return rest;
}

/** A bare context with the kernel installed under `config` (and `before` run first); evaluate in it. */
function realm(config: object = kernelConfig({ maxTimers: 10, maxTimerCreations: 10 }), before = "") {
  const context = createContext({});
  if (before !== "") runInContext(before, context);
  const install = runInContext(buildKernelSource("__kernel"), context) as (
    b: () => unknown,
    c: string,
  ) => unknown;
  install(() => undefined, JSON.stringify(config));
  return (code: string): unknown => runInContext(code, context);
}

describe("TextEncoder and TextDecoder", () => {
  it("encode UTF-8 as Node does, lone surrogates as U+FFFD", () => {
    const evaluate = realm();
    const inputs = ["", "hi", "héllo €", "😀 a\u0000b", "\ud800", "a\udc00b", "\ud83d"];
    for (const input of inputs) {
      const guest = evaluate(`Array.from(new TextEncoder().encode(${JSON.stringify(input)}))`);
      expect({ input, bytes: guest }).toEqual({ input, bytes: Array.from(new TextEncoder().encode(input)) });
    }
    expect(
      evaluate(
        `const t = new TextEncoder(); [t.encoding, t.encode().length, t.encode("abc").buffer.byteLength]`,
      ),
    ).toEqual(["utf-8", 0, 3]);
  });

  it("encodeInto writes whole characters only and counts what it read", () => {
    const evaluate = realm();
    expect(
      evaluate(
        `const d = new Uint8Array(5); const r = new TextEncoder().encodeInto("a€😀", d); [r.read, r.written, Array.from(d)]`,
      ),
    ).toEqual([2, 4, [0x61, 0xe2, 0x82, 0xac, 0]]);
  });

  it("decode as Node's TextDecoder does: replacement, BOM, ignoreBOM, fatal and stream", () => {
    const evaluate = realm();
    const cases: number[][] = [
      [0xef, 0xbb, 0xbf, 0x61],
      [0x61, 0xff, 0x62],
      [0xe2, 0x82],
      [0xed, 0xa0, 0x80],
      [0xf0, 0x9f, 0x98, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xc0, 0x80],
      [0xe0, 0x80, 0x80, 0x41],
    ];
    for (const bytes of cases) {
      const guest = evaluate(`new TextDecoder().decode(new Uint8Array(${JSON.stringify(bytes)}))`);
      const guestKeep = evaluate(
        `new TextDecoder("utf8", { ignoreBOM: true }).decode(new Uint8Array(${JSON.stringify(bytes)}).buffer)`,
      );
      expect({ bytes, guest, guestKeep }).toEqual({
        bytes,
        guest: new TextDecoder().decode(new Uint8Array(bytes)),
        guestKeep: new TextDecoder("utf8", { ignoreBOM: true }).decode(new Uint8Array(bytes)),
      });
    }
    expect(
      evaluate(
        `{ const d = new TextDecoder(); const b = new TextEncoder().encode("€😀"); [d.decode(b.subarray(0, 2), { stream: true }), d.decode(b.subarray(2, 5), { stream: true }), d.decode(b.subarray(5)), d.decode(new Uint8Array([0xe2]))] }`,
      ),
    ).toEqual(["", "€", "😀", "\ufffd"]);
    expect(
      evaluate(
        `try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])) } catch (e) { [e instanceof TypeError, e.code, e.message] }`,
      ),
    ).toEqual([
      true,
      "ERR_ENCODING_INVALID_ENCODED_DATA",
      "The encoded data was not valid for encoding utf-8",
    ]);
    expect(
      evaluate(
        `try { new TextDecoder("latin1") } catch (e) { [e instanceof RangeError, e.code, e.message] }`,
      ),
    ).toEqual([true, "ERR_ENCODING_NOT_SUPPORTED", 'The "latin1" encoding is not supported']);
    expect(
      evaluate(
        `{ const d = new TextDecoder(" UTF-8 ", { fatal: true }); [d.encoding, d.fatal, d.ignoreBOM] }`,
      ),
    ).toEqual(["utf-8", true, false]);
  });
});

describe("atob and btoa", () => {
  it("give Node's output and Node's DOMException for every input", () => {
    const evaluate = realm();
    const outcome = (f: () => unknown) => {
      try {
        return { value: f() };
      } catch (error) {
        const e = error as DOMException;
        return { name: e.name, message: e.message, code: e.code };
      }
    };
    const atobInputs = [
      "aGk=",
      "aGk",
      " aG\tk\n= ",
      "YQ==",
      "YQ",
      "a",
      "a*==",
      "YQ===",
      "YQ=a",
      "",
      "////",
      "ab=c",
    ];
    for (const input of atobInputs) {
      const guest = evaluate(
        `(() => { try { return { value: atob(${JSON.stringify(input)}) } } catch (e) { return { name: e.name, message: e.message, code: e.code } } })()`,
      );
      expect({ input, ...(guest as object) }).toEqual({ input, ...outcome(() => atob(input)) });
    }
    const btoaInputs = ["", "h", "hi", "hi!", "\u00ff\u0000", "€"];
    for (const input of btoaInputs) {
      const guest = evaluate(
        `(() => { try { return { value: btoa(${JSON.stringify(input)}) } } catch (e) { return { name: e.name, message: e.message, code: e.code } } })()`,
      );
      expect({ input, ...(guest as object) }).toEqual({ input, ...outcome(() => btoa(input)) });
    }
  });
});

describe("structuredClone", () => {
  it("copies data, keeps cycles and shared references, drops lastIndex", () => {
    const evaluate = realm();
    expect(
      evaluate(`(() => {
        const shared = { s: 1 };
        const m = new Map([[shared, shared]]); m.set("self", m);
        const buffer = new ArrayBuffer(8); new Uint8Array(buffer).set([1, 2, 3, 4]);
        const re = /a+/gi; re.lastIndex = 2;
        const e = new RangeError("bad", { cause: shared }); e.extra = 1;
        const src = { m, arr: [1, , 3], d: new Date(5), re, set: new Set([shared]), u16: new Uint16Array(buffer, 2, 2), dv: new DataView(buffer, 4), buffer, e, big: 10n, boxed: Object("s"), n: -0 };
        const c = structuredClone(src);
        return [c.m.get("self") === c.m, [...c.m.keys()][0] === [...c.set][0], c.e.cause === [...c.set][0], 1 in c.arr, c.arr.length,
          c.d instanceof Date && c.d.getTime(), String(c.re), c.re.lastIndex, c.u16.buffer === c.buffer && c.dv.buffer === c.buffer && c.buffer !== buffer,
          Array.from(c.u16), c.dv.getUint8(0), c.e instanceof RangeError, c.e.message, "extra" in c.e, c.big, typeof c.boxed, String(c.boxed), Object.is(c.n, -0),
          Object.getPrototypeOf(c) === Object.prototype];
      })()`),
    ).toEqual([
      true,
      true,
      true,
      false,
      3,
      5,
      "/a+/gi",
      0,
      true,
      [1027, 0],
      0,
      true,
      "bad",
      false,
      10n,
      "object",
      "s",
      true,
      true,
    ]);
  });

  it("throws DataCloneError with Node's text for what cannot be cloned, and refuses transfer", () => {
    const evaluate = realm();
    const texts =
      evaluate(`[() => 1, Symbol("x"), new WeakMap(), Promise.resolve(), { a: { f() {} } }, [1, new WeakSet()]].map((v) => {
      try { structuredClone(v); return "cloned"; } catch (e) { return [e instanceof DOMException, e instanceof Error, e.name, e.code, e.message]; }
    })`);
    const host = [
      () => 1,
      Symbol("x"),
      new WeakMap(),
      Promise.resolve(),
      { a: { f() {} } },
      [1, new WeakSet()],
    ].map((v) => {
      try {
        structuredClone(v);
        return "cloned";
      } catch (e) {
        const d = e as DOMException;
        return [true, true, d.name, d.code, d.message];
      }
    });
    expect(texts).toEqual(host);
    expect(
      evaluate(
        `try { structuredClone(1, { transfer: [new ArrayBuffer(1)] }) } catch (e) { [e.name, e.message] }`,
      ),
    ).toEqual([
      "DataCloneError",
      "structuredClone's transfer option is not supported in the sandbox: leave it out and the value is copied",
    ]);
    expect(evaluate(`structuredClone(2, { transfer: [] })`)).toBe(2);
  });
});

describe("crypto", () => {
  it("is RFC 8439 ChaCha20 keyed by the realm's entropy (checked against OpenSSL's)", () => {
    const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
    const evaluate = realm({
      ...kernelConfig({ maxTimers: 1, maxTimerCreations: 1 }),
      entropy: key.toString("hex"),
    });
    const guest = evaluate(
      "[Array.from(crypto.getRandomValues(new Uint8Array(100))), Array.from(crypto.getRandomValues(new Uint8Array(60)))]",
    ) as number[][];
    const stream = createCipheriv("chacha20", key, Buffer.alloc(16)).update(Buffer.alloc(160));
    expect([...(guest[0] as number[]), ...(guest[1] as number[])]).toEqual(Array.from(stream));
  });

  it("gets fresh entropy for every realm, and the key is gone from the realm's reach", () => {
    const a = kernelConfig({ maxTimers: 1, maxTimerCreations: 1 }).entropy;
    const b = kernelConfig({ maxTimers: 1, maxTimerCreations: 1 }).entropy;
    expect([/^[0-9a-f]{64}$/.test(a), a === b]).toEqual([true, false]);
    const first = realm()("crypto.randomUUID()");
    const second = realm()("crypto.randomUUID()");
    expect(first === second).toBe(false);
  });

  it("randomUUID gives 1000 distinct v4 UUIDs in one realm", () => {
    const result = realm()(
      `const all = new Set(); let shaped = 0; for (let i = 0; i < 1000; i++) { const u = crypto.randomUUID(); all.add(u); if (/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u)) shaped++; } [all.size, shaped]`,
    );
    expect(result).toEqual([1000, 1000]);
  });

  it("getRandomValues refuses what the web refuses, with its DOMExceptions", () => {
    const evaluate = realm();
    expect(
      evaluate(
        `[new Float64Array(1), new Uint8Array(65537), 1, new DataView(new ArrayBuffer(1))].map((v) => { try { crypto.getRandomValues(v); return "filled"; } catch (e) { return [e.name, e.code, e.message]; } })`,
      ),
    ).toEqual([
      ["TypeMismatchError", 17, "The data argument must be an integer-type TypedArray"],
      ["QuotaExceededError", 22, "The requested length exceeds 65,536 bytes"],
      ["TypeMismatchError", 17, "The data argument must be an integer-type TypedArray"],
      ["TypeMismatchError", 17, "The data argument must be an integer-type TypedArray"],
    ]);
    expect(
      evaluate(
        `const a = new BigUint64Array(4); const same = crypto.getRandomValues(a) === a; [same, a.some((x) => x !== 0n), typeof crypto.subtle, String(crypto)]`,
      ),
    ).toEqual([true, true, "undefined", "[object Crypto]"]);
  });

  it("fails loudly, not weakly, in a realm booted without entropy", () => {
    const { entropy: _gone, ...config } = kernelConfig({ maxTimers: 1, maxTimerCreations: 1 });
    expect(realm(config)(`try { crypto.randomUUID() } catch (e) { e.message }`)).toBe(
      "crypto is not available: this realm was started without entropy from the host",
    );
  });
});

describe("performance", () => {
  it("counts from timeOrigin and never goes backwards when the realm's clock does", () => {
    // The realm's Date.now steps back by 1000 ms after a few reads.
    const evaluate = realm(
      undefined,
      "let reads = 0; const realNow = Date.now; Date.now = () => realNow() - (++reads > 2 ? 1000 : 0);",
    );
    expect(
      evaluate(
        "const a = performance.now(); const b = performance.now(); const c = performance.now(); [a <= b, b <= c, typeof performance.timeOrigin, String(performance)]",
      ),
    ).toEqual([true, true, "number", "[object Performance]"]);
  });
});

describe("the kernel's web globals against a tampered realm", () => {
  it("read no poisoned iterator, index setter, Map method or typed-array getter", () => {
    const evaluate = realm();
    const result = evaluate(`(() => {
      // A string, not an array: the poisoned index setter would catch an array's own pushes.
      let calls = "";
      const m = new Map();
      Object.defineProperty(Array.prototype, "0", { configurable: true, set(v) { calls += "index set;"; }, get() { return "poison"; } });
      Array.prototype[Symbol.iterator] = function* () { calls += "iterator;"; };
      Map.prototype.get = () => { calls += "Map.get;"; }; Map.prototype.set = () => { calls += "Map.set;"; };
      Set.prototype.has = () => { calls += "Set.has;"; return false; };
      Object.defineProperty(Object.getPrototypeOf(Uint8Array.prototype), "buffer", { get() { calls += "buffer;"; return new ArrayBuffer(0); } });
      String.prototype.charCodeAt = () => { calls += "charCodeAt;"; return 0; };
      String.fromCharCode = () => { calls += "fromCharCode;"; return ""; };
      const text = new TextDecoder().decode(new TextEncoder().encode("héllo"));
      const b = atob(btoa("hi"));
      const c = structuredClone({ m });
      const bytes = crypto.getRandomValues(new Uint8Array(4));
      const target = new EventTarget(); let heard = 0; target.addEventListener("x", () => heard++); target.dispatchEvent(new Event("x"));
      const any = AbortSignal.any([AbortSignal.abort("r")]);
      delete Array.prototype[0];
      return [text, b, c.m instanceof Map, bytes.length, heard, any.reason, calls];
    })()`);
    expect(result).toEqual(["héllo", "hi", true, 4, 1, "r", ""]);
  });
});

describe("the globals themselves", () => {
  it("are lazy accessors as in Node, built once, replaced by assignment", () => {
    const evaluate = realm();
    expect(
      evaluate(`const d = Object.getOwnPropertyDescriptor(globalThis, "TextEncoder");
        const same = TextEncoder === globalThis.TextEncoder && crypto === crypto;
        globalThis.atob = 1;
        [typeof d.get, d.enumerable, same, atob, Object.getOwnPropertyDescriptor(globalThis, "atob").writable]`),
    ).toEqual(["function", false, true, 1, true]);
  });
});

describe("names under a bundler", () => {
  it("keeps the web names when a bundler renames the declarations (esbuild's TextEncoder2)", () => {
    const renamed = installWebGlobals
      .toString()
      // Every reference, as esbuild does; strings and property names stay.
      .replace(/(?<!["'.])\b(TextEncoder|AbortSignal|Crypto|atob|structuredClone)\b(?!["'])/g, "$12");
    expect(renamed).toContain("class TextEncoder2");
    const context = createContext({});
    const kit = { config: {}, entries: {}, inspect: String, reportError() {} };
    (runInContext(`(${renamed})`, context) as (kit: unknown) => void)(kit);
    expect(
      runInContext(
        "[TextEncoder.name, AbortSignal.name, crypto.constructor.name, atob.name, structuredClone.name]",
        context,
      ),
    ).toEqual(["TextEncoder", "AbortSignal", "Crypto", "atob", "structuredClone"]);
  });
});

describe("events and abort", () => {
  it("dispatch to listeners in order, once, handleEvent objects, signal removal and onabort", () => {
    const evaluate = realm();
    expect(
      evaluate(`(() => {
        const log = [];
        const t = new EventTarget();
        const off = new AbortController();
        t.addEventListener("x", (e) => log.push(["fn", e.type, e.target === t, e.currentTarget === t, e.eventPhase]));
        t.addEventListener("x", { handleEvent(e) { log.push(["object", this === obj]); } });
        const obj = null;
        t.addEventListener("x", () => log.push("once"), { once: true });
        t.addEventListener("x", () => log.push("until abort"), { signal: off.signal });
        const e = new Event("x", { cancelable: true });
        t.addEventListener("x", (ev) => ev.preventDefault());
        const first = t.dispatchEvent(e);
        off.abort();
        t.dispatchEvent(new Event("x"));
        const stop = new EventTarget();
        stop.addEventListener("y", (ev) => { log.push("a"); ev.stopImmediatePropagation(); });
        stop.addEventListener("y", () => log.push("b"));
        stop.dispatchEvent(new Event("y"));
        const c = new AbortController();
        c.signal.onabort = (ev) => log.push(["onabort", ev.type, c.signal.aborted, c.signal.reason.name, c.signal.reason.message, c.signal.reason.code]);
        c.abort(); c.abort("again");
        let thrown; try { c.signal.throwIfAborted() } catch (x) { thrown = x === c.signal.reason }
        return [first, e.defaultPrevented, e.currentTarget, thrown, log];
      })()`),
    ).toEqual([
      false,
      true,
      null,
      true,
      [
        ["fn", "x", true, true, 2],
        ["object", false],
        "once",
        "until abort",
        ["fn", "x", true, true, 2],
        ["object", false],
        "a",
        ["onabort", "abort", true, "AbortError", "This operation was aborted", 20],
      ],
    ]);
  });

  it("AbortSignal.any follows the first source, and abort() is already aborted", () => {
    const evaluate = realm();
    expect(
      evaluate(`const a = new AbortController(); const b = new AbortController(); const any = AbortSignal.any([a.signal, b.signal]);
        const before = any.aborted; b.abort("b first"); a.abort("a later");
        [before, any.aborted, any.reason, AbortSignal.abort().aborted, AbortSignal.abort(7).reason, AbortSignal.any([AbortSignal.abort(1), AbortSignal.abort(2)]).reason]`),
    ).toEqual([false, true, "b first", true, 7, 1]);
  });

  it("the classes have Node's names, lengths, tags and illegal constructors", () => {
    const evaluate = realm();
    expect(
      evaluate(`[TextEncoder.length, TextDecoder.length, EventTarget.length, Event.length, DOMException.length, AbortSignal.length,
        atob.length, btoa.length, crypto.getRandomValues.length, AbortSignal.any.length, AbortSignal.timeout.length, AbortSignal.abort.length,
        String(new AbortController().signal), Object.prototype.toString.call(new TextEncoder()), String(new Event("x")), String(new EventTarget()),
        new DOMException("m", "AbortError") instanceof Error, Object.getOwnPropertyNames(new DOMException("m")), new DOMException("m", { name: "DataCloneError", cause: 1 }).cause,
        (() => { try { new AbortSignal() } catch (e) { return [e.name, e.code, e.message] } })(),
        (() => { try { new Event() } catch (e) { return e.message } })()]`),
    ).toEqual([
      0,
      0,
      0,
      1,
      0,
      0,
      1,
      1,
      1,
      1,
      1,
      0,
      "[object AbortSignal]",
      "[object TextEncoder]",
      "[object Event]",
      "[object EventTarget]",
      true,
      ["stack"],
      1,
      ["TypeError", "ERR_ILLEGAL_CONSTRUCTOR", "Illegal constructor"],
      'The "type" argument must be specified',
    ]);
  });

  it("a listener's error fails the run as an uncaught error does in Node", async () => {
    expect(
      await run(
        `const t = new EventTarget(); t.addEventListener("x", () => { throw new Error("in listener") }); t.dispatchEvent(new Event("x")); "after"`,
      ),
    ).toMatchObject({
      success: false,
      errorCode: "SANDBOX_GUEST_ERROR",
      guestError: { name: "Error", message: "in listener" },
    });
  });

  it("AbortSignal.timeout aborts with a TimeoutError DOMException through the guest's timers", async () => {
    expect(
      await run(
        `const s = AbortSignal.timeout(5); const reason = await new Promise((ok) => s.addEventListener("abort", () => ok(s.reason))); [reason instanceof DOMException, reason.name, reason.message, reason.code]`,
      ),
    ).toEqual({
      success: true,
      logs: [],
      result: [true, "TimeoutError", "The operation was aborted due to timeout", 23],
    });
  });
});
