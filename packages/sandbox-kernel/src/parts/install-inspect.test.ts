import { format, formatWithOptions, inspect } from "node:util";
import * as vm from "node:vm";
import { describe, expect, it } from "vitest";
import { partExpression } from "../../test/support/part-script.js";
import type { KernelKit } from "../kit.js";
import { installInspect } from "./install-inspect.js";

/**
 * Every row is JavaScript source that builds a value (or, for `format`, an
 * argument list). The expected text is what Node's own `util.inspect` /
 * `util.format` prints for a twin of the value built in the test's realm; the
 * row is then checked with `installInspect` running in the host realm and
 * inside a fresh `vm` context, where the value is built in that context.
 */
type Row = readonly [label: string, source: string];
type DifferenceRow = readonly [label: string, source: string, expected: string];

const PLACEHOLDER = "[object could not be formatted]";

const NODE_MAJOR = Number.parseInt(process.versions.node, 10);

/**
 * The kernel prints one text on every Node line: Node 20's. Later lines spell
 * these rows differently — from Node 22 an ArrayBuffer's `byteLength` in
 * brackets, from Node 24 symbol keys without brackets; there each row is
 * expected to give the kernel's text, and a test checks that Node really
 * differs.
 */
const LATER_SPELLINGS: ReadonlyMap<string, { since: number; kernel: string }> = new Map([
  [
    "keys with quotes and escapes",
    { since: 24, kernel: String.raw`{ "it's": 1, 'a\nb': 2, [Symbol(it\'s)]: 3, [Symbol(a\nb)]: 4 }` },
  ],
  ["symbol key", { since: 24, kernel: "{ [Symbol(k)]: 1 }" }],
  ["own Symbol.toStringTag is a key", { since: 24, kernel: "{ a: 1, [Symbol(Symbol.toStringTag)]: 'T' }" }],
  ["ArrayBuffer", { since: 22, kernel: "ArrayBuffer { [Uint8Contents]: <01 02>, byteLength: 2 }" }],
  ["empty ArrayBuffer", { since: 22, kernel: "ArrayBuffer { [Uint8Contents]: <>, byteLength: 0 }" }],
  [
    "ArrayBuffer beyond maxArrayLength",
    {
      since: 22,
      kernel: `ArrayBuffer {\n  [Uint8Contents]: <${"00 ".repeat(100)}... 50 more bytes>,\n  byteLength: 150\n}`,
    },
  ],
  [
    "ArrayBuffer with a key",
    { since: 22, kernel: "ArrayBuffer { [Uint8Contents]: <00>, byteLength: 1, x: 1 }" },
  ],
  [
    "DataView",
    {
      since: 22,
      kernel:
        "DataView {\n  byteLength: 2,\n  byteOffset: 0,\n  buffer: ArrayBuffer { [Uint8Contents]: <00 00>, byteLength: 2 }\n}",
    },
  ],
]);
/** The kernel's text where this Node spells a row differently, else undefined. */
const laterSpelling = (label: string): string | undefined => {
  const later = LATER_SPELLINGS.get(label);
  return later !== undefined && NODE_MAJOR >= later.since ? later.kernel : undefined;
};
/**
 * Documented differences that vanish on Node 24: its V8 has `Error.isError`,
 * which the kernel uses, so there it prints Node's text.
 */
const SAME_ON_NODE_24: ReadonlySet<string> = new Set(["null-prototype Error is not recognised"]);

/** An error with a fixed, guest-only stack (as the kernel's stack filter leaves it). */
const error = (type: string, message: string, extra = ""): string =>
  `(() => { const e = new ${type}(${JSON.stringify(message)}); e.stack = ${JSON.stringify(
    `${type}: ${message}\n    at guest (sandbox.js:1:1)\n    at run (sandbox.js:2:2)`,
  )}; ${extra} return e; })()`;

const INSPECT_ROWS: readonly Row[] = [
  // primitives
  ["string", `'abc'`],
  ["string with a single quote → double quotes", `"it's"`],
  ["string with single and double quotes → backticks", `'it\\'s "q"'`],
  ["string with all three quotes → escaped single quotes", "'a\\'b\"c`d'"],
  ["string escapes", `'a\\nb\\t\\x00\\x7f\\u0085\\\\'`],
  ["lone surrogate", `'x\\ud800y'`],
  ["long string → maxStringLength", `'x'.repeat(10001)`],
  ["multi-line long string is split", `'line number\\n'.repeat(10)`],
  ["number", "1.5"],
  ["-0", "-0"],
  ["NaN", "NaN"],
  ["bigint", "1n"],
  ["symbol", `Symbol('x')`],
  ["symbol without description", "Symbol()"],
  ["undefined", "undefined"],
  ["null", "null"],
  ["boolean", "true"],
  // functions
  ["named function", "function f() {}"],
  ["anonymous arrow", "() => {}"],
  ["class", "class A {}"],
  ["anonymous class", "(class {})"],
  ["derived class", "class B extends (class A {}) {}"],
  ["class with a static field", "class C { static x = 1 }"],
  ["async function", "async function f() {}"],
  ["async arrow", "async () => {}"],
  ["generator function", "function* g() {}"],
  ["async generator function", "async function* ag() {}"],
  ["bound function", "(function f() {}).bind(null)"],
  ["function with properties", "Object.assign(function f() {}, { a: 1 })"],
  ["null-prototype function", "Object.setPrototypeOf(function f() {}, null)"],
  ["methods in an object", "({ f() {}, g: function () {}, h: () => {} })"],
  // arrays
  ["array", "[1, 2, 3]"],
  ["empty array", "[]"],
  ["hole", "[, 1]"],
  ["holes", "[1, , , 2]"],
  ["all holes", "new Array(5)"],
  ["huge sparse array", "new Array(4294967295)"],
  ["last index only", "(() => { const a = []; a[4294967294] = 1; return a; })()"],
  ["hole beyond maxArrayLength", "(() => { const a = [1]; a[150] = 2; return a; })()"],
  ["array with extra key", `Object.assign([1, 2], { foo: 'bar' })`],
  ["non-enumerable array property is hidden", "Object.defineProperty([1], 'hidden', { value: 1 })"],
  ["array subclass", "(() => { class Foo extends Array {} return Foo.from([1, 2]); })()"],
  ["null-prototype array", "Object.setPrototypeOf([1, 2], null)"],
  ["undefined, null, -0, 0n items", "[undefined, null, -0, 0n]"],
  ["functions and symbols as items", "[function () {}, class {}, Symbol.iterator]"],
  // array grouping (groupArrayElements)
  ["6 items stay on one line", "[1, 2, 3, 4, 5, 6]"],
  ["7 items", "[1, 2, 3, 4, 5, 6, 7]"],
  ["101 numbers → columns and more items", "Array.from({ length: 101 }, (_, i) => i)"],
  ["120 numbers", "Array.from({ length: 120 }, (_, i) => i)"],
  ["numbers of different widths (right-aligned)", "Array.from({ length: 26 }, (_, i) => i * 1000)"],
  ["negative numbers", "Array.from({ length: 12 }, (_, i) => i - 6)"],
  ["powers of ten", "Array.from({ length: 7 }, (_, i) => 10 ** i)"],
  ["bigints", "Array.from({ length: 7 }, (_, i) => BigInt(10 ** i))"],
  ["strings (left-aligned)", `Array.from({ length: 30 }, (_, i) => 'item' + i)`],
  ["mixed numbers and strings", `Array.from({ length: 8 }, (_, i) => (i % 2 ? 'a' : 1))`],
  ["letters", `({ x: Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i)) })`],
  ["strings of growing length", `Array.from({ length: 10 }, (_, i) => 'x'.repeat(i))`],
  ["small arrays", "Array.from({ length: 50 }, (_, i) => [i])"],
  ["objects are not grouped", "Array.from({ length: 7 }, (_, i) => ({ a: i }))"],
  ["20 objects", `Array.from({ length: 20 }, (_, i) => ({ id: i, name: 'item' }))`],
  ["100 items plus an extra key", "Object.assign(Array.from({ length: 100 }, () => 1), { extra: true })"],
  ["wide characters", `Array.from({ length: 7 }, () => '日本語')`],
  // objects and layout
  ["nested object beyond depth 2", "({ a: 1, b: { c: { d: { e: 1 } } } })"],
  ["nested arrays beyond depth 2", "({ a: [[[[1]]]] })"],
  ["deep arrays", "[[[[[[1]]]]]]"],
  ["empty values at depth 3 are shown", "({ a: { b: { c: {}, d: [], e: new Map() } } })"],
  ["non-empty values at depth 3", "({ a: { b: { c: new Map([[1, 1]]), d: new Set([1]), e: [1] } } })"],
  [
    "function at depth 3",
    "({ a: { b: { c: function f() {}, d: Object.assign(function g() {}, { x: 1 }) } } })",
  ],
  ["regexp at depth 3", "({ a: { b: { c: /x/, d: Object.assign(/y/, { z: 1 }) } } })"],
  ["null prototype at depth 3", "({ a: { b: { c: { __proto__: null, x: 1 } } } })"],
  ["class instance at depth 3", "({ a: { b: { c: new (class Foo { x = 1 })() } } })"],
  ["3 × 3 × 3 × objects", "Array.from({ length: 3 }, () => Array.from({ length: 3 }, () => [{ x: 1 }]))"],
  ["keys that need quotes", `({ 'a b': 1, $x: 2, _y: 3, 'x-y': 4, 1: 5, '01': 6, '': 7 })`],
  ["keys with quotes and escapes", `({ "it's": 1, 'a\\nb': 2, [Symbol("it's")]: 3, [Symbol('a\\nb')]: 4 })`],
  ["non-ASCII keys", `({ é: 1, ünï: 2 })`],
  ["symbol key", `({ [Symbol('k')]: 1 })`],
  ["own __proto__ key", `JSON.parse('{"__proto__": 1}')`],
  ["undefined and null values", "({ a: undefined, b: null })"],
  ["non-enumerable property is hidden", "Object.defineProperty({}, 'hidden', { value: 1 })"],
  ["null prototype", "({ __proto__: null, a: 1 })"],
  ["empty null prototype", "Object.create(null)"],
  ["prototype without a constructor", "Object.create(Object.create(null))"],
  ["Object.prototype", "Object.prototype"],
  ["Function.prototype", "Function.prototype"],
  ["Array.prototype", "Array.prototype"],
  ["Map.prototype", "Map.prototype"],
  ["Error.prototype", "Error.prototype"],
  ["Math", "Math"],
  ["JSON", "JSON"],
  ["class instance", "(() => { class Foo { constructor() { this.x = 1; } } return new Foo(); })()"],
  ["empty class instance", "(() => { class Foo {} return new Foo(); })()"],
  ["own Symbol.toStringTag is a key", `({ [Symbol.toStringTag]: 'T', a: 1 })`],
  [
    "inherited Symbol.toStringTag data property",
    `(() => { class Foo {} Foo.prototype[Symbol.toStringTag] = 'Bar'; return new Foo(); })()`,
  ],
  ["arguments object", "(function () { return arguments; })(1, 2)"],
  [
    "getters and setters",
    `(() => {
      const o = {};
      Object.defineProperty(o, 'g', { get() { return 1; }, enumerable: true });
      Object.defineProperty(o, 's', { set(v) {}, enumerable: true });
      Object.defineProperty(o, 'gs', { get() { return 1; }, set(v) {}, enumerable: true });
      return o;
    })()`,
  ],
  ["single line at exactly breakLength", `({ a: 'x'.repeat(62) })`],
  ["multi-line one past breakLength", `({ a: 'x'.repeat(63) })`],
  [
    "four long entries → one per line",
    "({ aaaaaaaaaa: 1111111111, bbbbbbbbbb: 2222222222, cccccccccc: 3333333333, dddddddddd: 4444444444 })",
  ],
  [
    "nested multi-line object",
    "({ a: { aaaaaaaaaa: 1111111111, bbbbbbbbbb: 2222222222, cccccccccc: 3333333333, dddd: 4 } })",
  ],
  [
    "long string value is split",
    `({ k: 'line one\\nline two is here and long enough to split: ' + 'z'.repeat(60) })`,
  ],
  ["long string in an array", `['a'.repeat(100)]`],
  ["multi-line string in an object", `({ s: 'a\\nb\\nc'.repeat(10) })`],
  [
    "strings with newlines in an array",
    `['line one is long enough\\nline two is also long enough\\nthree three three three three']`,
  ],
  ["mixed nesting", "({ a: [1, 2, 3], b: { c: [4, 5, 6], d: { e: [7, 8, 9] } } })"],
  // Map and Set
  ["Map", "new Map([[1, 2]])"],
  ["empty Map", "new Map()"],
  ["Map with object keys", "new Map([[{ a: 1 }, [1, 2]]])"],
  [
    "long Map → one entry per line",
    `new Map(Array.from({ length: 10 }, (_, i) => [i, 'value number ' + i]))`,
  ],
  ["Map with an extra key", "Object.assign(new Map([[1, 2]]), { extra: 1 })"],
  ["Map subclass", "(() => { class Foo extends Map {} return new Foo([[1, 2]]); })()"],
  ["null-prototype Map", "Object.setPrototypeOf(new Map([[1, 2]]), null)"],
  ["Set", "new Set([1, 2])"],
  ["empty Set", "new Set()"],
  ["Set beyond maxArrayLength", "new Set(Array.from({ length: 120 }, (_, i) => i))"],
  ["empty Set with an extra key", "Object.assign(new Set(), { extra: 1 })"],
  ["null-prototype Set", "Object.setPrototypeOf(new Set([1]), null)"],
  ["WeakMap", "new WeakMap()"],
  ["WeakSet", "new WeakSet()"],
  ["WeakMap with a key", "Object.assign(new WeakMap(), { a: 1 })"],
  ["array iterator", "[1, 2][Symbol.iterator]()"],
  // Date, RegExp, boxed primitives
  ["Date", "new Date(0)"],
  ["invalid Date", "new Date(NaN)"],
  ["Date with a key", "Object.assign(new Date(0), { x: 1 })"],
  ["Date subclass", "(() => { class D extends Date {} return new D(0); })()"],
  ["null-prototype Date", "Object.setPrototypeOf(new Date(0), null)"],
  ["RegExp", "/a/g"],
  ["RegExp flags and escapes", "/x\\/y/dimsuy"],
  ["RegExp with a key", "Object.assign(/a/, { b: 1 })"],
  ["RegExp subclass", `(() => { class R extends RegExp {} return new R('a', 'g'); })()`],
  ["null-prototype RegExp", "Object.setPrototypeOf(/a/, null)"],
  ["Number object", "new Number(1)"],
  ["String object", `new String('ab')`],
  ["Boolean object", "new Boolean(false)"],
  ["BigInt object", "Object(1n)"],
  ["Symbol object", `Object(Symbol('s'))`],
  ["Number object with a key", "Object.assign(new Number(3), { x: 1 })"],
  ["String object with a key", `Object.assign(new String('ab'), { x: 1 })`],
  ["Number subclass", "(() => { class N extends Number {} return new N(5); })()"],
  ["null-prototype Number", "Object.setPrototypeOf(new Number(1), null)"],
  // binary data
  ["Uint8Array", "new Uint8Array([1, 2, 3])"],
  ["Float64Array", "new Float64Array(2)"],
  ["BigInt64Array", "new BigInt64Array([1n, -2n])"],
  ["empty typed array", "new Uint8Array(0)"],
  ["typed array beyond maxArrayLength", "new Uint8Array(200)"],
  ["typed array grouping", "new Uint8Array(Array.from({ length: 30 }, (_, i) => i * 9))"],
  ["typed array with a key", "Object.assign(new Uint8Array(2), { x: 1 })"],
  ["null-prototype typed array", "Object.setPrototypeOf(new Uint8Array(2), null)"],
  ["ArrayBuffer", "new Uint8Array([1, 2]).buffer"],
  ["empty ArrayBuffer", "new ArrayBuffer(0)"],
  ["ArrayBuffer beyond maxArrayLength", "new ArrayBuffer(150)"],
  ["ArrayBuffer with a key", "Object.assign(new ArrayBuffer(1), { x: 1 })"],
  ["DataView", "new DataView(new ArrayBuffer(2))"],
  // errors
  ["Error with stack", error("Error", "boom")],
  ["TypeError with stack", error("TypeError", "bad")],
  ["RangeError without message", error("RangeError", "")],
  [
    "Error whose stack has no frames",
    `(() => { const e = new Error('x'); e.stack = 'Error: x'; return e; })()`,
  ],
  ["Error with stack undefined", "(() => { const e = new Error('x'); e.stack = undefined; return e; })()"],
  ["Error without a stack property", "(() => { const e = new Error('x'); delete e.stack; return e; })()"],
  ["Error with own enumerable props", error("Error", "x", "e.code = 'E'; e.n = 1;")],
  [
    "frameless Error with own props",
    `(() => { const e = new Error('x'); e.stack = 'Error: x'; e.code = 'E'; return e; })()`,
  ],
  [
    "Error with a cause",
    `(() => { const e = new Error('x', { cause: 1 }); e.stack = 'Error: x\\n    at f (s.js:1:1)'; return e; })()`,
  ],
  [
    "cause with shared frames",
    `(() => {
      const c = new Error('c');
      c.stack = 'Error: c\\n    at a (s.js:1:1)\\n    at b (s.js:1:1)\\n    at c (s.js:1:1)\\n    at d (s.js:1:1)\\n    at e (s.js:1:1)';
      const e = new Error('x', { cause: c });
      e.stack = 'Error: x\\n    at z (s.js:1:1)\\n    at a (s.js:1:1)\\n    at b (s.js:1:1)\\n    at c (s.js:1:1)\\n    at d (s.js:1:1)\\n    at e (s.js:1:1)';
      return e;
    })()`,
  ],
  [
    "AggregateError",
    error("AggregateError", "agg").replace('new AggregateError("agg")', 'new AggregateError([1, 2], "agg")'),
  ],
  [
    "Error subclass keeping the name Error",
    `(() => { class MyErr extends Error {} const e = new MyErr('m'); e.stack = 'Error: m\\n    at f (s.js:1:1)'; return e; })()`,
  ],
  [
    "Error subclass named …Error",
    `(() => { class MyError extends Error {} const e = new MyError('m'); e.stack = 'Error: m\\n    at f (s.js:1:1)'; return e; })()`,
  ],
  [
    "Error subclass with its own name",
    `(() => { class MyErr extends Error { constructor(m) { super(m); this.name = 'MyErr'; } } const e = new MyErr('m'); e.stack = 'MyErr: m\\n    at f (s.js:1:1)'; return e; })()`,
  ],
  [
    "nested Error is indented",
    `(() => { const e = new Error('x'); e.stack = 'Error: x\\n    at f (s.js:1:1)'; return { e, list: [e] }; })()`,
  ],
  [
    "Error with a changed name",
    `(() => { const e = new Error('x'); e.stack = 'Error: x'; e.name = 'Custom'; return e; })()`,
  ],
  [
    "Error with a changed message",
    `(() => { const e = new Error('x'); e.stack = 'Error: x\\n    at f (s.js:1:1)'; e.message = 'zzz'; return e; })()`,
  ],
  [
    "Error with a free-form stack",
    `(() => { const e = new Error('msg'); e.stack = 'weird stack text'; return e; })()`,
  ],
  // cycles
  ["self reference", "(() => { const o = { a: 1 }; o.self = o; return o; })()"],
  ["array containing itself", "(() => { const a = [1]; a.push(a); return a; })()"],
  ["two cycles", "(() => { const a = {}; const b = { a }; a.b = b; return [a, b]; })()"],
  [
    "cycles through Map keys and values",
    "(() => { const o = {}; o.a = [o, { o }]; o.b = new Map([[o, o]]); return o; })()",
  ],
  [
    "several references",
    "(() => { const a = {}; const b = {}; a.b = b; b.a = a; a.self = a; return { a, b }; })()",
  ],
  // proxies that forward to their target
  ["transparent Proxy of an object", "new Proxy({ a: 1 }, {})"],
  ["transparent Proxy of an array", "new Proxy([1, 2], {})"],
  ["transparent Proxy of a function", "new Proxy(function named() {}, {})"],
  [
    "revoked Proxy",
    "(() => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; })()",
  ],
  [
    "nested revoked Proxy",
    "(() => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return { p: proxy }; })()",
  ],
];

const FORMAT_ROWS: readonly Row[] = [
  ["single string is returned as is", `['a %s %% b']`],
  ["no arguments", "[]"],
  ["%s with a string", `['%s!', 'a']`],
  ["%s with too few arguments", `['%s %s', 'a']`],
  ["extra arguments are appended", `['%s', 'a', 'b', { c: 'd' }]`],
  ["%s with a number, -0 and a bigint", `['%s %s %s', 1.5, -0, 1n]`],
  ["%s with a symbol, null, undefined, boolean", `['%s %s %s %s', Symbol('x'), null, undefined, true]`],
  ["%s with an object → depth 0", `['%s', { a: { b: 1 } }]`],
  ["%s with an array → depth 0", `['%s', [1, [2, [3]]]]`],
  ["%s with a function → its source", `['%s', function f() { return 1; }]`],
  ["%s with a class → its source", `['%s', class A {}]`],
  ["%s with a Date", `['%s', new Date(0)]`],
  ["%s with an Error", `['%s', ${error("Error", "e")}]`],
  ["%d with a float", `['%d', 1.5]`],
  ["%d with a numeric string", `['%d', '42']`],
  ["%d with a bigint", `['%d', 1n]`],
  ["%d with a symbol", `['%d', Symbol()]`],
  ["%d with null, undefined, ''", `['%d %d %d', null, undefined, '']`],
  ["%d with -0", `['%d', -0]`],
  ["%d with an empty object", `['%d', {}]`],
  ["%d with an empty array", `['%d', []]`],
  ["%d with a one-element array", `['%d', [7]]`],
  ["%d with a Number object", `['%d', new Number(3)]`],
  ["%d with a Date", `['%d', new Date(5)]`],
  ["%i truncates", `['%i %i', 1.9, -0.5]`],
  ["%i with a bigint", `['%i', 1n]`],
  ["%i with text", `['%i %i', 'abc', '12px']`],
  ["%i with an array", `['%i', [7.5, 2]]`],
  ["%f", `['%f %f', '1.5x', null]`],
  ["%f with an array", `['%f', ['2.5']]`],
  ["%j", `['%j', { a: 1, b: [1, 'x', null, undefined, () => 1] }]`],
  ["%j on a cycle", `['%j', (() => { const o = {}; o.o = o; return o; })()]`],
  ["%j with undefined", `['%j', undefined]`],
  ["%j with a string", `['%j', 'str "q"']`],
  ["%j with Dates", `['%j', { d: new Date(0), bad: new Date(NaN) }]`],
  ["%j with non-finite numbers and -0", `['%j', { n: NaN, i: -Infinity, z: -0 }]`],
  ["%j with a Map", `['%j', new Map([[1, 2]])]`],
  ["%j with boxed primitives", `['%j', [new Number(1), new String('s'), new Boolean(true)]]`],
  ["%j with a typed array", `['%j', new Uint8Array([1, 2])]`],
  ["%O", `['%O', { a: { b: { c: { d: 1 } } } }]`],
  ["%o on plain data → depth 4", `['%o', { a: { b: { c: { d: { e: { f: 1 } } } } } }]`],
  ["%c is consumed", `['%c%s', 'color: red', 'x']`],
  ["%% ", `['100%% %s', 'sure']`],
  ["%%s", `['%%s', 1]`],
  ["%s%%%s", `['%s%%%s', 1, 2]`],
  ["unknown placeholder is kept", `['%x %s', 1]`],
  ["trailing %", `['a%', 1]`],
  ["lone %", `['%', 1]`],
  ["too few arguments for %d", `['%d %d', 1]`],
  ["first argument not a string", `[1, 'a', { b: 1 }]`],
  ["object first, string second stays raw", `[{ a: 1 }, 'x\\n']`],
  ["primitives only", `[Symbol('s'), 1n, -0]`],
  ["string then values", `['x', 'y', 1, { z: 'w' }]`],
];

const DIFFERENCE_ROWS: readonly DifferenceRow[] = [
  ["Promise state is not known (Node: Promise { 1 })", "Promise.resolve(1)", "Promise { <unknown> }"],
  ["pending Promise (Node: Promise { <pending> })", "new Promise(() => {})", "Promise { <unknown> }"],
  ["Map iterator entries are not read", "new Map([[1, 2]]).entries()", "[Map Iterator] { <items unknown> }"],
  ["Set iterator entries are not read", "new Set([1]).values()", "[Set Iterator] { <items unknown> }"],
  [
    "Symbol.toStringTag from a getter is not shown",
    "(() => { class Foo { get [Symbol.toStringTag]() { return 'X'; } } return new Foo(); })()",
    "Foo {}",
  ],
  [
    "util.inspect.custom is not called",
    "({ [Symbol.for('nodejs.util.inspect.custom')]() { return 'custom'; } })",
    "{\n  [Symbol(nodejs.util.inspect.custom)]: [Function: [nodejs.util.inspect.custom]]\n}",
  ],
  [
    "null-prototype Error is not recognised",
    "(() => { const e = new Error('x'); e.stack = 'Error: x'; return Object.setPrototypeOf(e, null); })()",
    "[Object: null prototype] {}",
  ],
  [
    "Error stack from a guest getter is not read",
    "(() => { const e = new Error('x'); Object.defineProperty(e, 'stack', { get() { return 'Error: x\\n    at f (s.js:1:1)'; } }); return e; })()",
    "[Error: x]",
  ],
  [
    "async function kind comes from its prototype",
    "Object.setPrototypeOf(async function f() {}, Function.prototype)",
    "[Function: f]",
  ],
  [
    "Symbol.hasInstance is not called for the constructor name",
    "(() => { class Foo { static [Symbol.hasInstance]() { return false; } } return new Foo(); })()",
    "Foo {}",
  ],
  [
    "a null-prototype instance's original class is not known",
    "Object.setPrototypeOf(new (class Foo { a = 1; })(), null)",
    "[Object: null prototype] { a: 1 }",
  ],
  [
    "a Proxy is formatted through its traps (Node formats the target)",
    "new Proxy({ a: 1 }, { ownKeys: () => ['b'], getOwnPropertyDescriptor: () => ({ value: 2, enumerable: true, configurable: true }) })",
    "{ b: 2 }",
  ],
  [
    "a Proxy whose traps throw gives the placeholder",
    "({ p: new Proxy({}, { getPrototypeOf() { throw new Error('trap'); } }) })",
    `{ p: ${PLACEHOLDER} }`,
  ],
];

const FORMAT_DIFFERENCE_ROWS: readonly DifferenceRow[] = [
  [
    "%s does not call an own toString",
    `['%s', { toString() { return 'mine'; } }]`,
    "{ toString: [Function: toString] }",
  ],
  ["%d does not call valueOf", `['%d', { valueOf() { return 5; } }]`, "NaN"],
  ["%j does not call toJSON (other than a Date's)", `['%j', { toJSON() { return 1; }, a: 2 }]`, '{"a":2}'],
  ["%j leaves accessors out", `['%j', { get a() { return 1; }, b: 2 }]`, '{"b":2}'],
  ["%j with a BigInt gives the placeholder (Node throws)", `['%j', { a: 1n }]`, PLACEHOLDER],
  ["%o does not show hidden properties", `['%o', [1]]`, "[ 1 ]"],
  [
    "%j on nesting too deep for JSON.stringify (Node throws)",
    `['%j', (() => { let a = []; for (let i = 0; i < 10000; i++) a = [a]; return a; })()]`,
    `${"[".repeat(10001)}${"]".repeat(10001)}`,
  ],
];

interface Realm {
  name: string;
  inspect(source: string): string;
  format(source: string): string;
}

function hostRealm(): Realm {
  const kit = {} as KernelKit;
  installInspect(kit);
  return {
    name: "host realm",
    inspect: (source) => kit.inspect(vm.runInThisContext(`(${source})`)),
    format: (source) => kit.format(vm.runInThisContext(`(${source})`) as unknown[]),
  };
}

/** installInspect and the files it imports, bundled as the kernel's build bundles them. */
const INSTALL_INSPECT = partExpression(new URL("./install-inspect.ts", import.meta.url), "installInspect");

/** A fresh vm context with installInspect installed; returns the context and its kit. */
function installInContext(): { context: vm.Context; kit: Pick<KernelKit, "inspect" | "format"> } {
  const context = vm.createContext({});
  vm.runInContext(`globalThis.kit = {}; (${INSTALL_INSPECT})(kit);`, context);
  return { context, kit: vm.runInContext("kit", context) };
}

function contextRealm(): Realm {
  const { context } = installInContext();
  return {
    name: "vm context",
    inspect: (source) => vm.runInContext(`kit.inspect((${source}))`, context) as string,
    format: (source) => vm.runInContext(`kit.format((${source}))`, context) as string,
  };
}

/** Node's own output for a twin of the value built in this realm. */
const nodeInspect = (source: string): string => inspect(vm.runInThisContext(`(${source})`));
const nodeFormat = (source: string): string => format(...(vm.runInThisContext(`(${source})`) as unknown[]));

const DEEP_ARRAY_SOURCE = "(() => { let a = []; for (let i = 0; i < 10000; i++) a = [a]; return a; })()";

for (const realm of [hostRealm(), contextRealm()]) {
  describe(`installInspect in the ${realm.name}`, () => {
    describe("inspect equals Node's util.inspect", () => {
      it.each(INSPECT_ROWS)("%s", (label, source) => {
        expect(realm.inspect(source)).toBe(laterSpelling(label) ?? nodeInspect(source));
      });
    });

    describe("format equals Node's util.format", () => {
      it.each(FORMAT_ROWS)("%s", (_label, source) => {
        expect(realm.format(source)).toBe(nodeFormat(source));
      });
    });

    describe("documented differences from Node", () => {
      it.each(DIFFERENCE_ROWS)("%s", (label, source, expected) => {
        if (NODE_MAJOR >= 24 && SAME_ON_NODE_24.has(label)) {
          expect(realm.inspect(source)).toBe(nodeInspect(source));
          return;
        }
        expect(nodeInspect(source)).not.toBe(expected);
        expect(realm.inspect(source)).toBe(expected);
      });
      it.each(FORMAT_DIFFERENCE_ROWS)("%s", (_label, source, expected) => {
        let node: string;
        try {
          node = nodeFormat(source);
        } catch (error) {
          node = `throws ${(error as Error).name}`;
        }
        expect(node).not.toBe(expected);
        expect(realm.format(source)).toBe(expected);
      });
      it("extra keys of an array longer than 10000 elements are not shown", () => {
        const source = "Object.assign(new Array(10001).fill(0), { extra: 1 })";
        expect(nodeInspect(source)).toContain("extra: 1");
        expect(realm.inspect(source)).toBe(nodeInspect("new Array(10001).fill(0)"));
      });
    });

    describe("bounded on large values", () => {
      it("formats a 10,000-deep array at depth 2", () => {
        expect(realm.inspect(DEEP_ARRAY_SOURCE)).toBe("[ [ [ [Array] ] ] ]");
      });
      it("formats a 1e6-element array as its first 100 items", () => {
        const text = realm.inspect("new Array(1e6).fill(0)");
        expect(text).toBe(inspect(new Array(1e6).fill(0)));
        expect(text).toBe(
          `[\n${"  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n".repeat(8)}  0, 0, 0, 0,\n  ... 999900 more items\n]`,
        );
      });
      it("formats a 1e5-entry Map as its first 100 entries", () => {
        const source = "new Map(Array.from({ length: 1e5 }, (_, i) => [i, i]))";
        const text = realm.inspect(source);
        expect(text).toBe(nodeInspect(source));
        expect(text.endsWith("  99 => 99,\n  ... 99900 more items\n}")).toBe(true);
      });
      it("formats a 1e7-byte typed array without listing its indices", () => {
        const text = realm.inspect("new Uint8Array(1e7)");
        expect(text).toBe(inspect(new Uint8Array(1e7)));
      });
    });
  });
}

describe("format's depth and character budget", () => {
  const { context } = installInContext();
  const formatIn = (source: string, depth?: number, maxChars?: number): string =>
    vm.runInContext(`kit.format((${source}), ${depth}, ${maxChars})`, context) as string;

  it("inspects %O and the trailing values to the depth given, as Node's formatWithOptions", () => {
    const source = '["%O", { a: { b: { c: { d: { e: 1 } } } } }, { a: { b: { c: { d: 1 } } } }]';
    const values = vm.runInThisContext(`(${source})`) as unknown[];
    expect(formatIn(source, 4)).toBe(formatWithOptions({ depth: 4 }, ...values));
    expect(formatIn(source)).toBe(format(...values));
  });

  it("leaves a line under the budget as it is", () => {
    const source = '["a %s", "b", { n: [1, 2, 3] }, "c"]';
    expect(formatIn(source, 2, 1000)).toBe(nodeFormat(source));
  });

  it("stops listing a flat object's properties past the budget", () => {
    const text = formatIn(
      "[Object.fromEntries(Array.from({ length: 1e5 }, (_, i) => ['k' + i, i]))]",
      2,
      1000,
    );
    expect(text.length).toBeLessThan(1500);
    expect(text).toMatch(/^\{\n {2}k0: 0,\n {2}k1: 1,\n[\s\S]*\.\.\. \d+ more properties\n\}$/);
  });

  it("stops nested objects and arrays too: the line stays near the budget whatever the arguments hold", () => {
    const wide =
      "Array.from({ length: 100 }, () => Array.from({ length: 100 }, () => ({ s: 'x'.repeat(100) })))";
    const text = formatIn(`[${wide}, ${wide}]`, 4, 5000);
    expect(text.length).toBeLessThan(30_000);
    expect(text).toContain("more items");
  });

  it("cuts a string argument past the budget without joining it in full", () => {
    expect(formatIn('["big:", "x".repeat(1e6)]', 2, 20)).toBe(`big: ${"x".repeat(15)}…`);
    expect(formatIn('["x".repeat(1e6)]', 2, 5)).toBe("xxxxx…");
    expect(formatIn('["%s!", "x".repeat(10)]', 2, 1000)).toBe(`${"x".repeat(10)}!`);
  });
});

describe("guest tampering after install", () => {
  const VALUES = [
    "({ a: 1, 'b c': [1, , 3], [Symbol('s')]: 'x', d: { e: { f: { g: 1 } } } })",
    "new Map([[1, { a: 'x' }], ['k', [1, 2]]])",
    "new Set([1, 'two', Symbol('three')])",
    "[new Date(0), new Date(NaN), /re/gi, new Uint8Array([1, 2]), new Number(1), new String('s'), Object(1n)]",
    "(() => { const o = { name: 'cycle' }; o.self = o; return o; })()",
    error("TypeError", "boom", "e.code = 'E';"),
    error("Error", "plain"),
    "[function f() {}, class A {}, async () => {}, function* g() {}, Symbol('sym'), 10n, -0]",
    "Array.from({ length: 30 }, (_, i) => 'item' + i)",
    "Array.from({ length: 120 }, (_, i) => i * 7)",
    "({ s: 'it\\'s a long string with a newline\\n and more text so that it is split up in two lines' })",
    "[new Uint8Array([1, 2, 3]).buffer, new DataView(new ArrayBuffer(1)), new WeakMap(), { __proto__: null, x: 1 }]",
    "({ 'needs quotes': '\\x00\\u0085', [Symbol('a\\nb')]: 1, __proto__: { inherited: true } })",
  ];
  const FORMATS = [
    "['%s %d %i %f %j %o %O %c %%', 'a', '42', 3.9, '1.5', { j: [1, new Date(0)] }, { o: 1 }, { O: 1 }, 'css', 'rest']",
    "['%s|%s|%s', { a: [1] }, function f() {}, Symbol('s')]",
    "[{ first: 'object' }, 'raw', 1]",
  ];
  /**
   * Replace every configurable intrinsic method and accessor with a throwing getter, poison the
   * property names an implementation might read by mistake on descriptors and iterator results,
   * then drop the globals. Data Node itself reads from a value's prototype chain (`constructor`,
   * a constructor's `name`, `Symbol.toStringTag`, an error's `name`/`message`/`cause`) is left
   * alone: changing it changes Node's output too.
   */
  const TAMPER = `(() => {
    const define = Object.defineProperty;
    const describe = Object.getOwnPropertyDescriptor;
    const ownKeys = Reflect.ownKeys;
    const protoOf = Object.getPrototypeOf;
    const GuestError = Error;
    const fail = () => { throw new GuestError('a tampered intrinsic ran'); };
    const keep = ['constructor', 'prototype', 'name', 'message', Symbol.toStringTag];
    const poison = (target, key) => {
      const desc = describe(target, key);
      if (desc !== undefined && desc.configurable) define(target, key, { __proto__: null, get: fail, set: fail, configurable: true });
    };
    const constructors = [Object, Array, String, Number, Boolean, Symbol, BigInt, Function, Map, Set, WeakMap,
      WeakSet, Date, RegExp, Error, Promise, ArrayBuffer, DataView, protoOf(Uint8Array)];
    const targets = [Reflect, Math, JSON, protoOf(new Map().entries()), protoOf(new Set().values()),
      protoOf([][Symbol.iterator]()), protoOf(protoOf([][Symbol.iterator]()))];
    for (let i = 0; i < constructors.length; i++) {
      targets[targets.length] = constructors[i];
      targets[targets.length] = constructors[i].prototype;
    }
    for (let t = 0; t < targets.length; t++) {
      const keys = ownKeys(targets[t]);
      for (let k = 0; k < keys.length; k++) {
        let kept = false;
        for (let j = 0; j < keep.length; j++) if (keys[k] === keep[j]) kept = true;
        if (!kept) poison(targets[t], keys[k]);
      }
    }
    const extra = ['value', 'get', 'set', 'enumerable', 'writable', 'configurable', 'done', 'length', '0', '1',
      'size', 'source', 'flags', 'type', 'primitive', 'key', 'desc', 'circular', 'depth'];
    for (let i = 0; i < extra.length; i++) define(Object.prototype, extra[i], { __proto__: null, get: fail, set: fail, configurable: true });
    define(Array.prototype, '0', { __proto__: null, get: fail, set: fail, configurable: true });
    const names = ['Object', 'Array', 'String', 'Number', 'Map', 'Set', 'Reflect', 'JSON', 'Math', 'Symbol',
      'Error', 'Uint8Array', 'Date', 'RegExp', 'Function', 'Boolean', 'BigInt', 'Promise', 'WeakMap', 'WeakSet'];
    for (let i = 0; i < names.length; i++) globalThis[names[i]] = undefined;
  })()`;

  it("gives the untampered text after the guest replaces the intrinsics it uses", () => {
    const { context, kit } = installInContext();
    const untampered = contextRealm();
    const values = vm.runInContext(`[${VALUES.join(",")}]`, context) as unknown[];
    const formats = vm.runInContext(`[${FORMATS.join(",")}]`, context) as unknown[][];
    vm.runInContext(TAMPER, context);
    expect(vm.runInContext("typeof Object", context)).toBe("undefined");
    expect(() => vm.runInContext("'x'.slice(0)", context)).toThrow("a tampered intrinsic ran");
    expect(() => vm.runInContext("[].join()", context)).toThrow("a tampered intrinsic ran");
    for (let i = 0; i < VALUES.length; i++) {
      expect(kit.inspect(values[i])).toBe(untampered.inspect(VALUES[i]!));
    }
    for (let i = 0; i < FORMATS.length; i++) {
      expect(kit.format(formats[i]!)).toBe(untampered.format(FORMATS[i]!));
    }
  });

  it("ignores a replaced Map.prototype.forEach and Array.prototype.join in the host realm", () => {
    const kit = {} as KernelKit;
    installInspect(kit);
    const original = Map.prototype.forEach;
    const originalJoin = Array.prototype.join;
    try {
      Map.prototype.forEach = () => {
        throw new Error("ran");
      };
      Array.prototype.join = () => {
        throw new Error("ran");
      };
      expect(kit.inspect(new Map([[1, [2, 3]]]))).toBe("Map(1) { 1 => [ 2, 3 ] }");
    } finally {
      Map.prototype.forEach = original;
      Array.prototype.join = originalJoin;
    }
  });
});

describe("guest code never runs while formatting", () => {
  it("does not run getters, toString, valueOf, toJSON or inspect.custom", () => {
    const { context, kit } = installInContext();
    const setup = `(() => {
      globalThis.calls = 0;
      const hit = () => { calls++; throw new Error('guest code ran'); };
      const o = { plain: 1, [Symbol.for('nodejs.util.inspect.custom')]: hit, toString: hit, valueOf: hit, toJSON: hit,
        [Symbol.toPrimitive]: hit };
      Object.defineProperty(o, 'g', { get: hit, enumerable: true });
      Object.defineProperty(o, 's', { set: hit, enumerable: true });
      class Tagged { get [Symbol.toStringTag]() { return hit(); } get inherited() { return hit(); } }
      const e = new Error('boom');
      Object.defineProperty(e, 'stack', { get: hit });
      Object.defineProperty(e, 'message', { get: hit });
      Object.defineProperty(e, 'name', { get: hit });
      Object.defineProperty(e, 'cause', { get: hit });
      class Sneaky extends Map { get size() { return hit(); } forEach() { hit(); } entries() { return hit(); } }
      const m = new Sneaky([[1, 2]]);
      const fn = function f() {};
      Object.defineProperty(fn, 'name', { get: hit });
      const arr = [1, 2];
      Object.defineProperty(arr, 0, { get: hit, enumerable: true });
      Object.defineProperty(arr, 'length', { value: 2 });
      return [o, new Tagged(), e, m, fn, arr];
    })()`;
    const values = vm.runInContext(setup, context) as unknown[];
    expect(values.map((value) => kit.inspect(value))).toEqual([
      "{\n  plain: 1,\n  toString: [Function: hit],\n  valueOf: [Function: hit],\n  toJSON: [Function: hit],\n" +
        "  g: [Getter],\n  s: [Setter],\n  [Symbol(nodejs.util.inspect.custom)]: [Function: hit],\n" +
        "  [Symbol(Symbol.toPrimitive)]: [Function: hit]\n}",
      "Tagged {}",
      "[Error] { [cause]: [Getter] }",
      "Sneaky(1) [Map] { 1 => 2 }",
      "[Function (anonymous)]",
      "[ [Getter], 2 ]",
    ]);
    const object = values[0];
    expect(kit.format(["%s|%d|%i|%f|%j", object, object, object, object, object])).toBe(
      `${kit.inspect(object)}|NaN|NaN|NaN|{"plain":1}`,
    );
    expect(kit.format(["%o", object])).toBe(kit.inspect(object));
    expect(vm.runInContext("calls", context)).toBe(0);
  });
});

describe("proxies", () => {
  const TRAPS = `['getPrototypeOf', 'setPrototypeOf', 'isExtensible', 'preventExtensions', 'getOwnPropertyDescriptor',
    'defineProperty', 'has', 'get', 'set', 'deleteProperty', 'ownKeys', 'apply', 'construct']`;

  it("survives a Proxy whose every trap throws, in every placeholder", () => {
    const { context, kit } = installInContext();
    const hostile = vm.runInContext(
      `(() => {
        const handler = {};
        for (const trap of ${TRAPS}) handler[trap] = () => { throw new Error('trap ' + trap); };
        return new Proxy({}, handler);
      })()`,
      context,
    );
    expect(kit.inspect(hostile)).toBe(PLACEHOLDER);
    expect(kit.inspect([hostile, { hostile }])).toBe(
      `[\n  ${PLACEHOLDER},\n  { hostile: ${PLACEHOLDER} }\n]`,
    );
    expect(
      kit.format([
        "%s %d %i %f %j %o %O %c",
        hostile,
        hostile,
        hostile,
        hostile,
        hostile,
        hostile,
        hostile,
        hostile,
      ]),
    ).toBe(`${PLACEHOLDER} NaN NaN NaN ${PLACEHOLDER} ${PLACEHOLDER} ${PLACEHOLDER} `);
    expect(kit.format([hostile, hostile])).toBe(`${PLACEHOLDER} ${PLACEHOLDER}`);
  });

  it("runs only the getPrototypeOf, getOwnPropertyDescriptor and ownKeys traps", () => {
    const { context, kit } = installInContext();
    const [proxies, used] = vm.runInContext(
      `(() => {
        const used = {};
        const handler = {};
        for (const trap of ${TRAPS}) {
          handler[trap] = (...args) => { used[trap] = (used[trap] || 0) + 1; return Reflect[trap](...args); };
        }
        const targets = [{ a: 1, b: { c: [1, 2] } }, [1, 2, 3], function named() {}, new Map([[1, 2]]), new Error('e'),
          new Date(0), /x/, new Uint8Array(2), Object.create(null)];
        return [targets.map((target) => new Proxy(target, handler)), used];
      })()`,
      context,
    ) as [unknown[], Record<string, number>];
    const texts = proxies.map((proxy) => kit.inspect(proxy));
    kit.format(["%s %d %i %f %j %o", ...proxies.slice(0, 6)]);
    expect(texts.slice(0, 3)).toEqual(["{ a: 1, b: { c: [ 1, 2 ] } }", "[ 1, 2, 3 ]", "[Function: named]"]);
    expect(Object.keys(used).sort()).toEqual(["getOwnPropertyDescriptor", "getPrototypeOf", "ownKeys"]);
  });

  it("stops walking a prototype chain that never ends", () => {
    const { context, kit } = installInContext();
    const endless = vm.runInContext(
      `(() => {
        const handler = { getPrototypeOf: () => new Proxy({}, handler) };
        return new Proxy({ a: 1 }, handler);
      })()`,
      context,
    );
    expect(kit.inspect(endless)).toBe("Object <Object <Object <Object <Complex prototype>>>> { a: 1 }");
  });
});

describe("later Node lines' own spellings", () => {
  for (const [label, later] of LATER_SPELLINGS) {
    it.skipIf(NODE_MAJOR < later.since)(
      `${label}: Node ${later.since}+ prints it differently from the kernel`,
      () => {
        const row = INSPECT_ROWS.find(([name]) => name === label);
        expect(row).toBeDefined();
        expect(nodeInspect(row![1])).not.toBe(later.kernel);
      },
    );
  }
});
