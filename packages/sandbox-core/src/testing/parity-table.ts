import { expect } from "vitest";
import { SANDBOX_CODES } from "../error-codes/sandbox-codes.js";
import type { SandboxEngine, SandboxResult } from "../types/sandbox-types.js";
import { PARITY_COMPLETION_ROWS } from "./parity-completion.js";
import { thrownAt } from "./parity-expect.js";
import { PARITY_URL_ROWS } from "./parity-url.js";
import { PARITY_WEB_GLOBALS_ROWS } from "./parity-web-globals.js";

/**
 * The parity table: one behaviour, one row, the exact value every engine must
 * produce. Each row runs `execute(code, context, options)` and compares the
 * result without `duration` and `memoryUsed` — `success`, `result`, `logs`,
 * `error`, `errorCode` and `guestError` — with `toStrictEqual`, so a
 * difference on one engine (a quote, a frame, a code) fails that engine's
 * suite. A row's `check` adds what a value comparison cannot say (identity of
 * shared references).
 */
export interface ParityRow {
  /** What the row pins, e.g. `console.log of a nested object`. */
  readonly name: string;
  /** The guest code. */
  readonly code: unknown;
  /** Context globals. */
  readonly context?: unknown;
  /** Per-execution options. */
  readonly options?: unknown;
  /** The result minus `duration` and `memoryUsed`. */
  readonly expected: ParityExpected;
  /**
   * The result on an engine whose `capabilities.javascriptEngine` is not V8,
   * where it differs: only that engine's own columns and wording of the
   * errors it raises (see `EngineCapabilities.javascriptEngine`), or a
   * behaviour it lacks, said in a comment on the row.
   */
  readonly byEngine?: { readonly quickjs?: ParityExpected };
  /** Extra assertions on the raw result, given the expected value this engine is held to. */
  readonly check?: (result: SandboxResult, expected: ParityExpected) => void;
}

/** What a {@link ParityRow} compares: the result without `duration`, `memoryUsed` and `usage`. */
export type ParityExpected = Omit<SandboxResult, "duration" | "memoryUsed">;

const { GUEST_ERROR, SYNTAX_ERROR, RESULT_NOT_TRANSFERABLE, INVALID_OPTIONS } = SANDBOX_CODES;

/** An array of `length` with only the given indices set (holes elsewhere). */
const sparse = (length: number, ...entries: [number, unknown][]): unknown[] => {
  const array: unknown[] = new Array(length);
  for (const [index, value] of entries) array[index] = value;
  return array;
};
const ok = (result: unknown, logs: SandboxResult["logs"] = []) => ({ success: true as const, result, logs });
const logged = (...messages: string[]) =>
  ok(
    undefined,
    messages.map((message) => ({ level: "log" as const, message })),
  );
const fail = (
  errorCode: (typeof SANDBOX_CODES)[keyof typeof SANDBOX_CODES],
  text: string,
  extra: { guestError?: NonNullable<SandboxResult["guestError"]>; logs?: SandboxResult["logs"] } = {},
) => ({
  success: false as const,
  error: `${text} (${errorCode})`,
  errorCode,
  logs: extra.logs ?? [],
  ...(extra.guestError === undefined ? {} : { guestError: extra.guestError }),
});

/** The rows; see {@link ParityRow}. */
export const PARITY_ROWS: readonly ParityRow[] = [
  // ---- console formatting (util.inspect / util.format rules) -------------
  { name: "console.log of an object", code: "console.log({ a: 1 })", expected: logged("{ a: 1 }") },
  {
    name: "console.log of nested arrays beyond depth 2",
    code: "console.log([1, [2, [3, [4]]]])",
    expected: logged("[ 1, [ 2, [ 3, [Array] ] ] ]"),
  },
  {
    name: "console.log of Map and Set",
    code: "console.log(new Map([[1, 2]]), new Set(['a']))",
    expected: logged("Map(1) { 1 => 2 } Set(1) { 'a' }"),
  },
  {
    name: "console.log of a class instance",
    code: "class Foo { constructor() { this.x = 1; } } console.log(new Foo())",
    expected: logged("Foo { x: 1 }"),
  },
  {
    name: "console.log of symbols, BigInt, -0, undefined and null",
    code: "console.log(Symbol('s'), 10n, -0, undefined, null)",
    expected: logged("Symbol(s) 10n -0 undefined null"),
  },
  {
    name: "console.log of a cycle",
    code: "const o = { name: 'o' }; o.self = o; console.log(o)",
    expected: logged("<ref *1> { name: 'o', self: [Circular *1] }"),
  },
  {
    name: "console.log with format specifiers",
    code: "console.log('%s is %d years, %i, %f, %j %O %c%%', 'Bob', 42.5, 42.5, '1.5', { a: 1 }, [1], 'color: red')",
    expected: logged('Bob is 42.5 years, 42, 1.5, {"a":1} [ 1 ] %'),
  },
  {
    name: "console.log of holes and raw top-level strings",
    code: "console.log([undefined, , 3]); console.log('a\\nb', \"it's\")",
    expected: logged("[ undefined, <1 empty item>, 3 ]", "a\nb it's"),
  },
  {
    name: "console.log quotes nested strings as Node does",
    code: 'console.log({ s: "it\'s", t: \'say "hi"\', u: `a\'b"c` })',
    expected: logged('{ s: "it\'s", t: \'say "hi"\', u: `a\'b"c` }'),
  },
  {
    name: "console.log of functions and classes",
    code: "console.log(function f() {}, () => {}, class A {}, async function g() {})",
    expected: logged("[Function: f] [Function (anonymous)] [class A] [AsyncFunction: g]"),
  },
  {
    name: "console.log of quoted and symbol keys, null prototypes, typed arrays, dates",
    code: "console.log({ 'a b': 1, [Symbol('k')]: 2 }, Object.create(null), new Uint8Array([1, 2, 3]), new Date(0))",
    expected: logged(
      "{ 'a b': 1, [Symbol(k)]: 2 } [Object: null prototype] {} Uint8Array(3) [ 1, 2, 3 ] 1970-01-01T00:00:00.000Z",
    ),
  },
  {
    name: "console.log breaks long objects over lines",
    code: "console.log({ longerPropertyName1: 'value number one', longerPropertyName2: 'value number two', third: 3 })",
    expected: logged(
      "{\n  longerPropertyName1: 'value number one',\n  longerPropertyName2: 'value number two',\n  third: 3\n}",
    ),
  },
  {
    name: "console.log of an Error shows its guest-only stack",
    code: "console.log(new Error('bad'))",
    expected: logged("Error: bad\n    at sandbox.js:1:13"),
    byEngine: { quickjs: logged("Error: bad\n    at sandbox.js:1:16") },
  },
  {
    name: "console levels",
    code: "console.info(1); console.warn(2); console.error(3); console.debug(4)",
    expected: ok(undefined, [
      { level: "info", message: "1" },
      { level: "warn", message: "2" },
      { level: "error", message: "3" },
      { level: "debug", message: "4" },
    ]),
  },
  // ---- the result codec ---------------------------------------------------
  {
    name: "a result with Date, Map, Set, RegExp and BigInt",
    code: "({ d: new Date(0), m: new Map([[1, { k: 2 }]]), s: new Set([1, 'a']), r: /x/gi, b: 10n })",
    expected: ok({ d: new Date(0), m: new Map([[1, { k: 2 }]]), s: new Set([1, "a"]), r: /x/gi, b: 10n }),
  },
  {
    name: "undefined, NaN, ±Infinity and -0 in arrays and objects",
    code: "({ list: [undefined, NaN, Infinity, -Infinity, -0], u: undefined })",
    expected: ok({
      list: [undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0],
      u: undefined,
    }),
  },
  { name: "a top-level undefined", code: "console.log('ran'); undefined", expected: logged("ran") },
  { name: "a top-level -0", code: "-0", expected: ok(-0) },
  { name: "a top-level NaN", code: "const n = NaN; n", expected: ok(Number.NaN) },
  { name: "a top-level BigInt", code: "2n ** 70n", expected: ok(2n ** 70n) },
  {
    name: "a top-level string with quotes and a lone surrogate",
    code: "'a\"b\\ud800'",
    expected: ok('a"b\ud800'),
  },
  {
    name: "a sparse array keeps its holes and length",
    code: "const a = [1, , 3]; a.length = 5; a",
    expected: ok(sparse(5, [0, 1], [2, 3])),
  },
  {
    name: "typed arrays, DataView and ArrayBuffer",
    code: "({ u8: new Uint8Array([1, 2, 3]), f64: new Float64Array([1.5]), buf: new Uint8Array([7, 8]).buffer })",
    expected: ok({
      u8: new Uint8Array([1, 2, 3]),
      f64: new Float64Array([1.5]),
      buf: new Uint8Array([7, 8]).buffer,
    }),
  },
  {
    name: "an Error value as a result",
    code: "new RangeError('r')",
    expected: ok(Object.assign(new RangeError("r"), { stack: "RangeError: r\n    at sandbox.js:1:1" })),
    byEngine: {
      quickjs: ok(Object.assign(new RangeError("r"), { stack: "RangeError: r\n    at sandbox.js:1:4" })),
    },
    check: (result, expected) => {
      expect(result.result).toBeInstanceOf(RangeError);
      expect((result.result as Error).stack).toBe((expected.result as Error).stack);
    },
  },
  {
    name: "a class instance crosses as a plain object",
    code: "class Point { constructor() { this.x = 1; } } new Point()",
    expected: ok({ x: 1 }),
    check: (result) => expect(Object.getPrototypeOf(result.result)).toBe(Object.prototype),
  },
  {
    name: "shared references and cycles keep their identity",
    code: "const shared = { v: 1 }; const root = { a: shared, b: shared }; root.self = root; root",
    expected: ok(
      (() => {
        const shared = { v: 1 };
        const root: Record<string, unknown> = { a: shared, b: shared };
        root.self = root;
        return root;
      })(),
    ),
    check: (result) => {
      const value = result.result as { a: unknown; b: unknown; self: unknown };
      expect(value.a).toBe(value.b);
      expect(value.self).toBe(value);
    },
  },
  {
    name: "a getter runs once when the result is copied",
    code: "let n = 0; ({ get g() { n += 1; return n; } })",
    expected: ok({ g: 1 }),
  },
  {
    name: "context values cross in through the same codec",
    code: "[when instanceof Date, tags instanceof Set, tags.has('x'), big + 1n, typeof nothing, nothing === undefined]",
    context: { when: new Date(5), tags: new Set(["x"]), big: 41n, nothing: undefined },
    expected: ok([true, true, true, 42n, "undefined", true]),
  },
  // ---- failures -----------------------------------------------------------
  {
    name: "a thrown TypeError: name, message, guest line and column, guest-only stack",
    code: "throw new TypeError('boom')",
    expected: thrownAt("TypeError", "boom", 1, 7),
    byEngine: { quickjs: thrownAt("TypeError", "boom", 1, 10) },
  },
  {
    name: "a thrown non-error value",
    code: "throw 'plain'",
    expected: fail(GUEST_ERROR, "Uncaught 'plain'", {
      guestError: { name: "", message: "'plain'", stack: "" },
    }),
  },
  {
    name: "a rejected promise",
    code: "Promise.reject(new Error('async boom'))",
    expected: thrownAt("Error", "async boom", 1, 16),
    byEngine: { quickjs: thrownAt("Error", "async boom", 1, 19) },
  },
  {
    name: "top-level await then throw keeps the original column",
    code: "await null; throw new Error('after')",
    expected: thrownAt("Error", "after", 1, 19),
    byEngine: { quickjs: thrownAt("Error", "after", 1, 22) },
  },
  {
    name: "a guest's unhandled rejection fails its run (and never reaches the host process)",
    code: "new Promise((ok, no) => { throw new Error('boom'); }); 1",
    expected: fail(GUEST_ERROR, "Unhandled promise rejection: Error: boom (line 1, column 33)", {
      guestError: {
        name: "Error",
        message: "boom",
        stack: "Error: boom\n    at sandbox.js:1:33\n    at sandbox.js:1:1",
        line: 1,
        column: 33,
        unhandledRejection: true,
      },
    }),
    // QuickJS as built by quickjs-emscripten exposes no promise rejection tracker: a rejection no
    // one handles goes unseen, and the run completes with its value (see the quickjs engine's README).
    byEngine: { quickjs: ok(1) },
  },
  {
    name: "an uncaught error in a timer fails the run",
    code: "setTimeout(() => { throw new Error('later'); }, 1); 'value'",
    expected: thrownAt("Error", "later", 1, 26),
    byEngine: { quickjs: thrownAt("Error", "later", 1, 29) },
  },
  {
    name: "a syntax error with its line and column",
    code: "const a = 1;\nconst = 3;",
    expected: fail(SYNTAX_ERROR, "SyntaxError: Unexpected token '=' (line 2, column 7)", {
      guestError: { name: "SyntaxError", message: "Unexpected token '='", stack: "", line: 2, column: 7 },
    }),
  },
  {
    name: "a function in the result names its path",
    code: "({ items: [1, { fn() {} }] })",
    expected: fail(
      RESULT_NOT_TRANSFERABLE,
      "result.items[1].fn cannot leave the sandbox: it is a function; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays)",
    ),
  },
  {
    name: "a symbol result",
    code: "Symbol('s')",
    expected: fail(
      RESULT_NOT_TRANSFERABLE,
      "result cannot leave the sandbox: it is a symbol; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays)",
    ),
  },
  {
    name: "a WeakMap result",
    code: "({ w: new WeakMap() })",
    expected: fail(
      RESULT_NOT_TRANSFERABLE,
      "result.w cannot leave the sandbox: it is a WeakMap; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays)",
    ),
  },
  // ---- what the guest can read -------------------------------------------
  {
    name: "e.stack shows guest frames only",
    code: "try { null.x } catch (e) { e.stack }",
    expected: ok("TypeError: Cannot read properties of null (reading 'x')\n    at sandbox.js:1:12"),
    byEngine: { quickjs: ok("TypeError: cannot read property 'x' of null\n    at sandbox.js:1:6") },
  },
  {
    name: "Error.captureStackTrace shows guest frames only",
    code: "function where() { const o = {}; Error.captureStackTrace(o); return o.stack; } where()",
    expected: ok("Error\n    at where (sandbox.js:1:40)\n    at sandbox.js:1:80"),
    byEngine: { quickjs: ok("Error\n    at where (sandbox.js:1:57)\n    at sandbox.js:1:79") },
  },
  {
    name: "prepareStackTrace cannot be replaced to read CallSites",
    code: "'use strict'; let threw = false; try { Error.prepareStackTrace = () => 'mine'; } catch { threw = true; } [threw, typeof new Error('x').stack]",
    expected: ok([true, "string"]),
  },
  {
    name: "the kernel never reads a poisoned Promise constructor or species",
    code: "const calls = []; let on = false; Object.defineProperty(Promise, Symbol.species, { configurable: true, get() { if (on) calls.push('species'); return Promise; } }); Object.defineProperty(Promise.prototype, 'constructor', { configurable: true, get() { if (on) calls.push('constructor'); return Promise; } }); on = true; queueMicrotask(() => {}); on = false; calls",
    expected: ok([]),
  },
  {
    name: "code generation from strings is refused: eval, Function and its async and generator kinds",
    code: "const tries = [() => eval('1'), () => new Function('return 1'), () => Function('return 1'), () => (() => {}).constructor('x'), () => Object.getPrototypeOf(async function () {}).constructor('x'), () => Object.getPrototypeOf(function* () {}).constructor('x'), () => Object.getPrototypeOf(async function* () {}).constructor('x')]; tries.map((t) => { try { t(); return 'ran'; } catch (e) { return e instanceof EvalError ? e.name + ': ' + e.message : 'other: ' + e; } })",
    expected: ok(Array(7).fill("EvalError: Code generation from strings disallowed for this context")),
  },
  {
    name: "a refused eval throws at its call",
    code: "eval('1 + 1')",
    expected: thrownAt("EvalError", "Code generation from strings disallowed for this context", 1, 1),
  },
  {
    name: "refusing code generation keeps the Function intrinsics' names, lengths and prototype chain",
    code: "[typeof eval, eval.name, eval.length, Function.name, Function.length, (function () {}).constructor === Function, (() => {}) instanceof Function, Object.getPrototypeOf(Function) === Function.prototype, Object.getPrototypeOf(Object.getPrototypeOf(async function () {}).constructor) === Function]",
    expected: ok(["function", "eval", 1, "Function", 1, true, true, true, true]),
  },
  // ---- bad input, the same on every engine -------------------------------
  {
    name: "code that is not a string",
    code: 42,
    expected: fail(INVALID_OPTIONS, "code: must be a string (got number)"),
  },
  {
    name: "a context that is not an object",
    code: "1",
    context: [1],
    expected: fail(INVALID_OPTIONS, "context: must be a plain object of values to copy in as globals"),
  },
  {
    name: "a function in the context names its path",
    code: "1",
    context: { helpers: { run: () => 1 } },
    expected: fail(
      INVALID_OPTIONS,
      "context.helpers.run: a function cannot be copied into the sandbox; pass plain data",
    ),
  },
  ...PARITY_COMPLETION_ROWS,
  ...PARITY_WEB_GLOBALS_ROWS,
  ...PARITY_URL_ROWS,
];

/** Run one row on `engine` and assert its exact value. */
export async function checkParityRow(engine: SandboxEngine, row: ParityRow): Promise<void> {
  const result = await engine.execute(
    row.code as string,
    row.context as Record<string, unknown> | undefined,
    row.options as Parameters<SandboxEngine["execute"]>[2],
  );
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  const engineName = engine.capabilities.javascriptEngine;
  const expected =
    engineName === undefined || engineName === "v8"
      ? row.expected
      : (row.byEngine?.[engineName] ?? row.expected);
  expect(rest, row.name).toStrictEqual(expected);
  row.check?.(result, expected);
}
