import { createRequire } from "node:module";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterAll, describe, expect, it } from "vitest";
import { IsolateEngine } from "../src/index.js";

// Adversarial tests: guest code tries to reach the host through the bridge.
// isolated-vm's README: a leaked Reference, ExternalCopy, Callback or context
// global is usually enough for full control of the host process. Each test is
// named after the technique and counts its assertions.

interface RawIsolatedVm {
  Isolate: new (options: {
    memoryLimit: number;
  }) => {
    createContextSync(): {
      global: { setSync(key: string, value: unknown): void };
      evalSync(code: string, options: { copy: true }): unknown;
      release(): void;
    };
    dispose(): void;
  };
  Callback: new (fn: () => void) => unknown;
}

const ivm = createRequire(import.meta.url)("isolated-vm") as RawIsolatedVm;
const PLAIN_DATA = "return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays)";
// In-process: the same realm as in a helper (the helper runs this code), and some checks here
// watch the host itself (its event loop stays responsive), which only in-process is this process.
const engine = new IsolateEngine({ process: "in-process", timeout: 10_000 });
afterAll(() => engine.destroy());

/** Run guest code that must succeed; return its result. */
async function guest(code: string, context?: Record<string, unknown>): Promise<unknown> {
  const result: SandboxResult = await engine.execute(code, context);
  if (!result.success) throw new Error(`guest code failed: ${result.error}`);
  return result.result;
}

interface GraphSummary {
  keys: string[];
  anonymousNativeFunctions: number;
  bridgeMethodNames: string[];
  visited: number;
}

/**
 * Walks every object and function reachable from globalThis: own keys (string
 * and symbol), property values, accessor functions (without calling them)
 * and prototypes. A leaked isolated-vm handle shows up as one of its method
 * names; a leaked host callback as an anonymous native function.
 */
const WALK_GLOBAL_GRAPH = `(() => {
  const BRIDGE = ["applySync", "applySyncPromise", "applyIgnored", "derefInto", "copySync", "copyInto",
    "setSync", "getSync", "evalSync", "evalClosureSync", "compileScriptSync", "createContextSync", "runSync"];
  const toSource = Function.prototype.toString;
  const seen = new Set();
  const queue = [globalThis];
  const keys = new Set();
  const bridge = [];
  let anonymousNative = 0;
  while (queue.length > 0) {
    const node = queue.pop();
    if (seen.has(node)) continue;
    seen.add(node);
    if (typeof node === "function") {
      let source = "";
      try { source = toSource.call(node); } catch {}
      const name = Object.getOwnPropertyDescriptor(node, "name");
      if (source.includes("[native code]") && (name === undefined || name.value === "")) anonymousNative++;
    }
    const proto = Object.getPrototypeOf(node);
    if (proto !== null) queue.push(proto);
    for (const key of Reflect.ownKeys(node)) {
      const label = typeof key === "symbol" ? key.toString() : key;
      keys.add(label);
      if (BRIDGE.includes(label)) bridge.push(label);
      const d = Object.getOwnPropertyDescriptor(node, key);
      for (const v of [d.value, d.get, d.set]) {
        if (v !== null && (typeof v === "object" || typeof v === "function")) queue.push(v);
      }
    }
  }
  return { keys: [...keys].sort(), anonymousNativeFunctions: anonymousNative, bridgeMethodNames: bridge, visited: seen.size };
})()`;

/** The same walk in a pristine isolated-vm context, optionally with a deliberately leaked callback. */
function walkPristineContext(leak?: string): GraphSummary {
  const isolate = new ivm.Isolate({ memoryLimit: 32 });
  try {
    const context = isolate.createContextSync();
    if (leak !== undefined) context.global.setSync(leak, new ivm.Callback(() => {}));
    return context.evalSync(WALK_GLOBAL_GRAPH, { copy: true }) as GraphSummary;
  } finally {
    isolate.dispose();
  }
}

describe("IsolateEngine escapes", () => {
  it("object-graph walk from globalThis: only the timer API and the pinned Error.prepareStackTrace differ from a pristine context", async () => {
    expect.assertions(5);
    const pristine = walkPristineContext();
    expect(pristine.bridgeMethodNames).toEqual([]);
    const sandbox = (await guest(WALK_GLOBAL_GRAPH)) as GraphSummary;
    const pristineKeys = new Set(pristine.keys);
    // Beside the timer API: the kernel's web globals (install-web-globals), lazy accessors whose
    // classes are built only on first read, so the walk sees their names and getter functions;
    // and URL/URLSearchParams (install-url), defined at install, so their members show too.
    expect(sandbox.keys.filter((key) => !pristineKeys.has(key))).toEqual([
      "AbortController",
      "AbortSignal",
      "DOMException",
      "Event",
      "EventTarget",
      "TextDecoder",
      "TextEncoder",
      "URL",
      "URLSearchParams",
      "append",
      "atob",
      "btoa",
      "canParse",
      "clearInterval",
      "clearTimeout",
      "crypto",
      "getAll",
      "hash",
      "host",
      "hostname",
      "href",
      "origin",
      "password",
      "pathname",
      "performance",
      "port",
      "prepareStackTrace",
      "protocol",
      "queueMicrotask",
      "searchParams",
      "setInterval",
      "setTimeout",
      "structuredClone",
      "username",
    ]);
    expect(sandbox.bridgeMethodNames).toEqual(pristine.bridgeMethodNames);
    // The same anonymous natives as V8 itself has (%ThrowTypeError% and kin): no host callback.
    expect(sandbox.anonymousNativeFunctions).toBe(pristine.anonymousNativeFunctions);
    expect(sandbox.visited).toBeGreaterThan(500); // the walk really covered the intrinsics
  });

  it("object-graph walk self-test: a deliberately leaked Callback is detected", () => {
    expect.assertions(2);
    const pristine = walkPristineContext();
    const leaky = walkPristineContext("leakedHostCallback");
    expect(leaky.keys.filter((key) => !pristine.keys.includes(key))).toEqual(["leakedHostCallback"]);
    expect(leaky.anonymousNativeFunctions).toBe(pristine.anonymousNativeFunctions + 1);
  });

  it("Object.getOwnPropertyNames(globalThis): no ivm, _ivm, Reference, $0 or kernel globals", async () => {
    expect.assertions(2);
    const names = [
      "ivm",
      "_ivm",
      "Reference",
      "ExternalCopy",
      "Callback",
      "Isolate",
      "Context",
      "Script",
      "$0",
      "$1",
      "__suaveplanPayload",
      "require",
      "process",
      "module",
      "Buffer",
      "global",
    ];
    expect(
      await guest(
        `${JSON.stringify(names)}.map((name) => typeof globalThis[name] + ":" + (name in globalThis))`,
      ),
    ).toEqual(names.map(() => "undefined:false"));
    expect(
      await guest(
        "Object.getOwnPropertyNames(globalThis).concat(Object.getOwnPropertySymbols(globalThis).map(String)).filter((n) => /suaveplan|ivm|^\\$\\d|host|payload/i.test(n))",
      ),
    ).toEqual([]);
  });

  it("constructor.constructor: every Function constructor is the guest's own, and refuses code from strings", async () => {
    expect.assertions(1);
    const refused = "EvalError: Code generation from strings disallowed for this context";
    expect(
      await guest(`const attempt = (f) => { try { return f(); } catch (e) { return e.name + ": " + e.message; } };
      [
        console.log.constructor === Function,
        setTimeout.constructor.constructor === Function,
        attempt(() => ({}).constructor.constructor("return this")),
        attempt(() => console.log.constructor("return typeof process + typeof require + typeof module")),
        attempt(() => (async () => {}).constructor("return typeof process")),
        attempt(() => Object.getPrototypeOf(function* () {}).constructor("return 1")),
        attempt(() => eval("typeof process")),
      ]`),
    ).toEqual([true, true, refused, refused, refused, refused, refused]);
  });

  it("walking prototypes of every global reaches only guest-realm intrinsics", async () => {
    expect.assertions(1);
    // Every prototype chain from a global ends at this context's Object.prototype (or null).
    expect(
      await guest(`Object.getOwnPropertyNames(globalThis).filter((name) => {
        let value;
        try { value = globalThis[name]; } catch { return false; }
        if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
        let node = value;
        for (let i = 0; i < 50 && node !== null; i++) {
          if (node === Object.prototype) return false;
          node = Object.getPrototypeOf(node);
        }
        return node !== null;
      })`),
    ).toEqual([]);
  });

  it("fn.caller / arguments.callee.caller from callbacks the kernel invokes: always null", async () => {
    expect.assertions(1);
    expect(
      await guest(`(async () => {
        const seen = [];
        function onTimer() { seen.push(["timer", onTimer.caller, arguments.callee.caller]); }
        await new Promise((done) => setTimeout(function wake() { onTimer(); seen.push(["wake", wake.caller]); done(); }, 1));
        await new Promise((done) => queueMicrotask(function micro() { seen.push(["microtask", micro.caller]); done(); }));
        const thenable = { then: function then(resolve) { seen.push(["then", then.caller]); resolve(1); } };
        await thenable;
        return seen.map(([where, ...callers]) => where + ":" + callers.map((c) => c === null ? "null" : typeof c).join("/"));
      })()`),
    ).toEqual(["timer:function/function", "wake:null", "microtask:null", "then:null"]);
  });

  it("a sloppy getter on the result reads its caller while the codec copies it out: null", async () => {
    expect.assertions(1);
    expect(
      await guest(
        "Object.defineProperty({}, 'probe', { enumerable: true, get: function probe() { return probe.caller === null ? 'null' : typeof probe.caller; } })",
      ),
    ).toEqual({ probe: "null" });
  });

  it("Error.prepareStackTrace replaced, redefined or deleted, Error rebound: pinned, so no CallSite, kernel function or receiver reaches guest code", async () => {
    expect.assertions(1);
    // Every stack taken in a callback the kernel runs is text with sandbox frames only; the
    // pinned formatter, called with a fake frame, hands its methods nothing of its own.
    expect(
      await guest(`(async () => {
        const attempts = [];
        const attempt = (what) => { try { what(); attempts.push("done"); } catch (error) { attempts.push(error.name); } };
        attempt(() => { "use strict"; Error.prepareStackTrace = (error, callSites) => callSites; });
        attempt(() => Object.defineProperty(Error, "prepareStackTrace", { value: (error, callSites) => callSites }));
        attempt(() => { "use strict"; globalThis.Error = function Error() {}; });
        attempts.push(delete Error.prepareStackTrace);
        const stacks = [];
        const collect = () => {
          const stack = new Error("probe").stack;
          stacks.push(typeof stack === "string" && stack.split("\\n").slice(1).every((line) => /^    at (.* \\()?sandbox\\.js:\\d+:\\d+\\)?$/.test(line)));
        };
        await new Promise((done) => setTimeout(function onTimer() { collect(); done(); }, 1));
        await new Promise((done) => queueMicrotask(function onMicrotask() { collect(); done(); }));
        await { then(resolve) { collect(); resolve(); } };
        const seen = [];
        const fake = {
          getScriptNameOrSourceURL() { seen.push(typeof this, arguments.length); return "sandbox.js"; },
          getLineNumber: () => 1,
          getColumnNumber: () => 2,
          getFunctionName: function name() { seen.push(name.caller === null ? "caller null" : typeof name.caller); return "fake"; },
        };
        const text = Error.prepareStackTrace(new Error("x"), [fake]);
        return { attempts, stacks, seen, text, get probe() { collect(); return stacks.at(-1); } };
      })()`),
    ).toEqual({
      attempts: ["TypeError", "TypeError", "TypeError", false],
      stacks: [true, true, true],
      seen: ["object", 0, "caller null"],
      text: "Error: x\n    at fake (sandbox.js:1:2)",
      probe: true,
    });
  });

  it("poisoned prototypes and statics are never called by the bridge (console, timers, result copy)", async () => {
    expect.assertions(2);
    const result = await engine.execute(`
      const apply = Reflect.apply;
      const define = Object.defineProperty;
      const values = Object.values;
      const calls = Object.create(null);
      let count = 0;
      let recording = false;
      const record = (what) => { if (recording) calls[count++] = what; };
      const poison = (owner, key) => {
        const original = owner[key];
        define(owner, key, { __proto__: null, configurable: true, writable: true, value: function (...args) {
          record(typeof key === "symbol" ? key.description : key);
          return apply(original, this, args);
        } });
      };
      for (const key of ["call", "apply", "bind", "toString"]) poison(Function.prototype, key);
      for (const key of ["apply", "ownKeys", "get", "set", "defineProperty"]) poison(Reflect, key);
      for (const key of ["keys", "defineProperty", "getOwnPropertyDescriptor", "getPrototypeOf", "create", "hasOwn", "entries"]) poison(Object, key);
      for (const key of ["push", "join", "map", "slice", "forEach", Symbol.iterator]) poison(Array.prototype, key);
      for (const key of ["slice", "charCodeAt", "replace", "startsWith", "toString"]) poison(String.prototype, key);
      for (const key of ["then", "catch", "finally"]) poison(Promise.prototype, key);
      for (const key of ["resolve", "reject", "all"]) poison(Promise, key);
      for (const key of ["add", "has", "delete", "forEach"]) poison(Set.prototype, key);
      for (const key of ["forEach", "get", "set"]) poison(Map.prototype, key);
      for (const key of ["test", "exec", Symbol.replace]) poison(RegExp.prototype, key);
      poison(JSON, "stringify");
      define(Array.prototype, "0", { __proto__: null, configurable: true, set(v) { record("Array.prototype[0] setter"); } });
      for (const key of ["get", "set", "value", "host"]) {
        define(Object.prototype, key, { __proto__: null, configurable: true, get() { record("Object.prototype." + key); return undefined; } });
      }
      define(Error, Symbol.hasInstance, { __proto__: null, configurable: true, value() { record("Error[Symbol.hasInstance]"); return false; } });
      const logged = { a: [1, "two"], m: new Map([[1, new Set([2])]]), d: new Date(0), f() {} };
      recording = true;
      console.log(logged, "%s=%d", "x", 1);
      const id = setTimeout(() => {}, 1000);
      clearTimeout(id);
      setTimeout(() => console.warn("tick"), 1);
      queueMicrotask(() => console.info("micro"));
      new Promise((done) => setTimeout(done, 20)).constructor === Promise;
      ({ nested: { list: [1, 2, 3] }, get calls() { recording = false; return values(calls); } })
    `);
    expect({ success: result.success, error: result.error, logs: result.logs }).toEqual({
      success: true,
      error: undefined,
      logs: [
        {
          level: "log",
          message:
            "{\n  a: [ 1, 'two' ],\n  m: Map(1) { 1 => Set(1) { 2 } },\n  d: 1970-01-01T00:00:00.000Z,\n  f: [Function: f]\n} %s=%d x 1",
        },
        { level: "info", message: "micro" },
        { level: "warn", message: "tick" },
      ],
    });
    // "calls" is read when the result is copied out, after the console and timer calls above.
    expect(result.result).toEqual({ nested: { list: [1, 2, 3] }, calls: [] });
  });

  // Regression: queueMicrotask and the settling of a thenable completion once called
  // Promise.prototype.then on the kernel's own promises, which reads `constructor` and
  // `Symbol.species` (guest-poisonable). The kernel awaits instead; the parity table pins it everywhere.
  it("poisoned Promise.prototype.constructor and Promise[Symbol.species] are never consulted by the kernel", async () => {
    expect.assertions(1);
    const result = await engine.execute(`
      const calls = [];
      let recording = false;
      Object.defineProperty(Promise, Symbol.species, { configurable: true, get() { if (recording) calls.push("species"); return Promise; } });
      Object.defineProperty(Promise.prototype, "constructor", { configurable: true, get() { if (recording) calls.push("constructor"); return Promise; } });
      recording = true;
      queueMicrotask(() => {});
      recording = false;
      calls`);
    expect(result.result).toEqual([]);
  });

  it("host errors never cross: a throwing onLog is invisible to the guest", async () => {
    expect.assertions(1);
    const result = await engine.execute(
      "let seen = 'no error'; try { console.log('a'); console.error('b'); } catch (e) { seen = String(e) + e.stack; } seen",
      {},
      {
        onLog: () => {
          throw new Error(`host failure at ${process.cwd()}/secret.ts`);
        },
      },
    );
    expect({ success: result.success, result: result.result }).toEqual({ success: true, result: "no error" });
  });

  it("codec refusals carry no host stack frames or paths", async () => {
    expect.assertions(2);
    const result = await engine.execute("({ handle: new WeakMap(), get more() { return new WeakSet(); } })");
    expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
      error: `result.handle cannot leave the sandbox: it is a WeakMap; ${PLAIN_DATA} (SANDBOX_RESULT_NOT_TRANSFERABLE)`,
    });
    expect(JSON.stringify(result)).not.toContain(process.cwd());
  });

  it("shared memory in a result (SharedArrayBuffer, views on it, shared WebAssembly.Memory) is refused or copied, never shared", async () => {
    const cases = [
      ["new SharedArrayBuffer(8)", "result"],
      ["({ view: new Int32Array(new SharedArrayBuffer(8)) })", "result.view"],
      ["[new DataView(new SharedArrayBuffer(8))]", "result[0]"],
    ] as const;
    expect.assertions(cases.length + 2);
    for (const [code, path] of cases) {
      const result = await engine.execute(code);
      expect({ success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
        success: false,
        errorCode: SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
        error: `${path} cannot leave the sandbox: it is a SharedArrayBuffer; ${PLAIN_DATA} (SANDBOX_RESULT_NOT_TRANSFERABLE)`,
      });
    }
    // Values cross as codec text: a shared memory is an object of no own enumerable properties.
    const memory = await engine.execute("new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true })");
    expect({ success: memory.success, result: memory.result }).toEqual({ success: true, result: {} });
    // Plain binary data is copied as usual.
    expect((await engine.execute("new Uint8Array([1, 2, 3])")).result).toEqual(new Uint8Array([1, 2, 3]));
  });

  it("shared memory returned by a getter only on its second read (check-then-copy race): every getter is read once, so the copy is what was checked", async () => {
    expect.assertions(2);
    const raced = await engine.execute(
      "let reads = 0; ({ get x() { return reads++ === 0 ? 1 : new Int32Array(new SharedArrayBuffer(8)); } })",
    );
    expect({ success: raced.success, result: raced.result }).toEqual({ success: true, result: { x: 1 } });
    const nested = await engine.execute(
      "let reads = 0; [new Error('shared', { cause: { get memory() { return reads++ === 0 ? new SharedArrayBuffer(8) : 1; } } })]",
    );
    expect({ success: nested.success, errorCode: nested.errorCode, error: nested.error }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
      error: `result[0].cause.memory cannot leave the sandbox: it is a SharedArrayBuffer; ${PLAIN_DATA} (SANDBOX_RESULT_NOT_TRANSFERABLE)`,
    });
  });

  // V8 runs FinalizationRegistry cleanups, Atomics.waitAsync timeouts and async
  // WebAssembly compile results as isolate tasks, outside any timed call: on
  // the next entry into the isolate (the host's synchronous context creation),
  // where a guest loop blocked the host thread for good, or after the context
  // was released, where a waitAsync timeout aborted the host process.
  it("FinalizationRegistry cleanup callback looping forever: never runs outside a timed call (host hang)", async () => {
    expect.assertions(2);
    const local = new IsolateEngine({ process: "in-process", timeout: 2_000 });
    try {
      const planted = await local.execute(`
        if (typeof FinalizationRegistry === "function") {
          const registry = new FinalizationRegistry(() => { while (true) {} });
          for (let i = 0; i < 1000; i++) registry.register({}, i);
          globalThis.keep = registry;
        }
        typeof FinalizationRegistry`);
      expect(planted.result).toBe("undefined");
      const results = [];
      for (let i = 0; i < 3; i++) {
        results.push(
          (await local.execute("const a = []; for (let i = 0; i < 300000; i++) a.push({ i }); 2 + 3")).result,
        );
      }
      expect(results).toEqual([5, 5, 5]);
    } finally {
      await local.destroy();
    }
  });

  it("Atomics.waitAsync whose timeout fires after the execution ended: not available (host abort)", async () => {
    expect.assertions(2);
    const planted = await engine.execute(`
      const cell = new Int32Array(new SharedArrayBuffer(16));
      if (typeof Atomics.waitAsync === "function") Atomics.waitAsync(cell, 0, 0, 5);
      typeof Atomics.waitAsync`);
    expect(planted.result).toBe("undefined");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await engine.execute("2 + 3")).result).toBe(5);
  });

  it("async WebAssembly.compile/instantiate continuations run inside the timed call", async () => {
    expect.assertions(3);
    const empty = "new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])";
    expect(
      await guest(`(async () => {
        const module = await WebAssembly.compile(${empty});
        const fromModule = await WebAssembly.instantiate(module);
        const fromBytes = await WebAssembly.instantiate(${empty});
        return [module instanceof WebAssembly.Module, fromModule instanceof WebAssembly.Instance,
          fromBytes.module instanceof WebAssembly.Module, fromBytes.instance instanceof WebAssembly.Instance];
      })()`),
    ).toEqual([true, true, true, true]);
    const looping = await engine.execute(
      `WebAssembly.compile(${empty}).then(() => { while (true) {} }); 1`,
      {},
      { timeout: 200 },
    );
    expect(looping.errorCode).toBe(SANDBOX_CODES.TIMEOUT);
    expect((await engine.execute("2 + 3")).result).toBe(5);
  });

  // isolated-vm 5 copies a rejection nobody handled out of the isolate after the call's timeout
  // ended, reading the reason's `message` and `stack` with no time limit of its own.
  it("unhandled rejection whose reason has a looping message or stack getter: the host stays responsive and the isolate is replaced", async () => {
    expect.assertions(3);
    const local = new IsolateEngine({ process: "in-process", timeout: 300 });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      const results = [];
      for (const code of [
        "Promise.reject({ get message() { for (;;) {} } }); 1",
        "const e = new Error('x'); Object.defineProperty(e, 'stack', { get() { for (;;) {} } }); Promise.reject(e); 1",
      ]) {
        const result = await local.execute(code);
        results.push({ success: result.success, errorCode: result.errorCode });
      }
      expect(results).toEqual([
        { success: false, errorCode: SANDBOX_CODES.TIMEOUT },
        { success: false, errorCode: SANDBOX_CODES.TIMEOUT },
      ]);
      // The host's own timer kept running meanwhile (about 100 ticks in ~1.1 s).
      expect(ticks).toBeGreaterThan(30);
      expect((await local.execute("2 + 3")).result).toBe(5);
    } finally {
      clearInterval(ticker);
      await local.destroy();
    }
  });

  it("giant result (one string referenced many times, or in error text and causes): refused above memoryLimit", async () => {
    const cases = [
      ["const s = 'x'.repeat(2 ** 21); [s, s, s, s]", "result[1]"],
      [
        "const s = 'x'.repeat(2 ** 21); const o = {}; for (let i = 0; i < 16; i++) o['k' + i] = s; o",
        "result.k1",
      ],
      ["const s = 'x'.repeat(2 ** 21); new Map([[1, s], [2, s]]).set(3, s).set(4, s)", "result.get(2)"],
      [
        "const e = new Error('x'.repeat(2 ** 20)); [e, new Error('y', { cause: [e.message, e.message] })]",
        "result[1].cause[1]",
      ],
    ] as const;
    expect.assertions(cases.length + 1);
    const local = new IsolateEngine({ process: "in-process", timeout: 10_000, memoryLimit: 8 * 1024 * 1024 });
    try {
      for (const [code, path] of cases) {
        const result = await local.execute(code);
        expect({ code, success: result.success, errorCode: result.errorCode, error: result.error }).toEqual({
          code,
          success: false,
          errorCode: SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
          error: `${path} cannot leave the sandbox: it is larger than ${8 * 1024 * 1024} bytes; ${PLAIN_DATA} (SANDBOX_RESULT_NOT_TRANSFERABLE)`,
        });
      }
      // A shared object is written once (later references are back-references), so it is counted once.
      expect(
        (
          await local.execute(
            "const big = { s: 'x'.repeat(2 ** 20) }; const r = Array(64).fill(big); r.length",
          )
        ).result,
      ).toBe(64);
    } finally {
      await local.destroy();
    }
  });

  it("giant result handed over by a getter, proxy trap or error field only on its second read: never copied", async () => {
    const cases = [
      "let reads = 0; const s = 'x'.repeat(2 ** 22); ({ get x() { return reads++ === 0 ? 1 : [s, s, s, s]; } })",
      "let reads = 0; const s = 'x'.repeat(2 ** 22); new Proxy({ x: 1 }, { get(target, key) { return key !== 'x' ? undefined : reads++ === 0 ? 1 : [s, s, s, s]; } })",
      "let reads = 0; const s = 'x'.repeat(2 ** 22); const e = new Error('m'); Object.defineProperty(e, 'message', { get() { return reads++ === 0 ? 'm' : s + s + s; } }); e",
    ];
    expect.assertions(cases.length);
    const local = new IsolateEngine({ process: "in-process", timeout: 10_000, memoryLimit: 8 * 1024 * 1024 });
    try {
      const seen = [];
      for (const code of cases) {
        const result = await local.execute(code);
        seen.push(result.success ? JSON.stringify(result.result) : result.error);
      }
      expect(seen[0]).toBe('{"x":1}');
      expect(seen[1]).toBe('{"x":1}');
      // The lazily formatted stack reads the message again: it is counted as copied, and too large.
      expect(seen[2]).toBe(
        `result cannot leave the sandbox: it is larger than ${8 * 1024 * 1024} bytes; ${PLAIN_DATA} (SANDBOX_RESULT_NOT_TRANSFERABLE)`,
      );
    } finally {
      await local.destroy();
    }
  });

  it("WebAssembly.Memory touched page by page: held to memoryLimit (SANDBOX_MEMORY_EXCEEDED)", async () => {
    expect.assertions(1);
    const local = new IsolateEngine({ process: "in-process", timeout: 10_000, memoryLimit: 8 * 1024 * 1024 });
    try {
      const result = await local.execute(`
        const memory = new WebAssembly.Memory({ initial: 1024 }); // 64 MiB
        const bytes = new Uint8Array(memory.buffer);
        for (let i = 0; i < bytes.length; i += 4096) bytes[i] = 1;
        bytes.length`);
      // Eight times the 8 MiB limit: the realm's Wasm memory cap refuses it before a page is made.
      expect({ success: result.success, errorCode: result.errorCode }).toEqual({
        success: false,
        errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      });
    } finally {
      await local.destroy();
    }
  });

  it("a context value cannot smuggle a host function, even nested", async () => {
    expect.assertions(2);
    const result = await engine.execute("typeof tools.run", { tools: { run: () => process.exit(1) } });
    expect({ success: result.success, errorCode: result.errorCode }).toEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
    });
    expect(result.error).toBe(
      "context.tools.run: a function cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
    );
  });

  it("state planted on shared intrinsics or globals does not reach the next execution", async () => {
    expect.assertions(1);
    await guest(
      "Object.prototype.planted = 1; Function.prototype.call = () => 'hijacked'; globalThis.console = { log() {} }; setTimeout = null; 0",
    );
    expect(
      await guest(
        "[typeof ({}).planted, Function.prototype.call === Function.prototype.call && typeof setTimeout, (() => 1).call()]",
      ),
    ).toEqual(["undefined", "function", 1]);
  });

  it("a source module runs inside the sandbox with no more reach than user code", async () => {
    expect.assertions(1);
    const local = new IsolateEngine({ process: "in-process" });
    try {
      local.registerModule({
        name: "probe",
        source:
          "module.exports = { host: typeof process + typeof require + typeof __suaveplanPayload, thisIsExports: this === module.exports };",
      });
      const result = await local.execute("probe");
      expect(result.result).toEqual({ host: "undefinedundefinedundefined", thisIsExports: true });
    } finally {
      await local.destroy();
    }
  });
});
