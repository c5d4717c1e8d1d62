import * as vm from "node:vm";
import { describe, expect, it } from "vitest";
import { partExpression } from "../../test/support/part-script.js";
import type { NotTransferableRecord } from "../kit.js";
import { createHostCodec, installCodec } from "./install-codec.js";

type Codec = ReturnType<typeof createHostCodec>;

const MB = 1 << 20;
/** The codec as the kernel installs it (stacks kept); the host's own codec blanks them. */
const host = (() => {
  const kit = {} as Parameters<typeof installCodec>[0];
  installCodec(kit);
  return { encode: kit.encode, decode: kit.decode, isNotTransferable: kit.isNotTransferable } as Codec;
})();
const roundTrip = (value: unknown, codec: Codec = host): unknown =>
  codec.decode(codec.encode(value, "result", MB));
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
};
/** installCodec and the files it imports, bundled as the kernel's build bundles them. */
const INSTALL_CODEC = partExpression(new URL("./install-codec.ts", import.meta.url), "installCodec");
/** The codec installed in a fresh `node:vm` context, from that bundle. */
const realm = (): { context: vm.Context; codec: Codec; run: (code: string) => unknown } => {
  const context = vm.createContext();
  const run = (code: string): unknown => vm.runInContext(code, context);
  const codec = run(`(() => { const kit = {}; (${INSTALL_CODEC})(kit); return kit; })()`) as Codec;
  return { context, codec, run };
};
const nest = (levels: number, wrap: (inner: unknown) => unknown): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = wrap(value);
  return value;
};

class Point {
  x: number;
  y: number;
  constructor(x: number, y: number) {
    this.x = x;
    this.y = y;
  }
  get sum(): number {
    return this.x + this.y;
  }
}
class MyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MyError";
  }
}

describe("installCodec", () => {
  describe("round trip in the host realm", () => {
    const offsetBuffer = new ArrayBuffer(16);
    new Uint8Array(offsetBuffer).set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    const withCode = Object.assign(new RangeError("out of range"), { code: "E_RANGE", detail: { n: 1 } });
    const nullProto = Object.assign(Object.create(null) as object, { a: 1 });
    // biome-ignore lint/suspicious/noSparseArray: sparse arrays are the point
    const sparse = [1, , 3, , ,];
    const cases: [string, unknown, unknown?][] = [
      ["string", 'héllo \u2028 \ud800 "quoted" \\ \n \u0000 😀 \udc00x'],
      ["empty string", ""],
      ["integer", 42],
      ["float", -1.5e-300],
      ["large number", 1e21],
      ["true", true],
      ["false", false],
      ["null", null],
      ["undefined", undefined],
      ["-0", -0],
      ["NaN", Number.NaN],
      ["Infinity", Number.POSITIVE_INFINITY],
      ["-Infinity", Number.NEGATIVE_INFINITY],
      ["BigInt", -12345678901234567890123456789n],
      ["huge BigInt", 7n ** 500n],
      ["Date", new Date(1_700_000_000_000)],
      ["invalid Date", new Date(Number.NaN)],
      ["RegExp", /a+(b)?/dgimsuy],
      // biome-ignore lint/complexity/useRegexLiterals: TypeScript allows the v flag in a literal only for ES2024
      ["RegExp with the v flag", new RegExp("[\\p{L}--[a-z]]", "v")],
      ["RegExp lastIndex dropped", Object.assign(/x/g, { lastIndex: 3 }), /x/g],
      ["array", [1, "two", [3], { four: 4 }]],
      ["sparse array with trailing holes", sparse],
      ["array of undefined", [undefined, undefined]],
      ["array's extra properties dropped", Object.assign([1, 2], { extra: true }), [1, 2]],
      ["plain object", { a: 1, "b c": [2], "": null, 10: "ten", nested: { deep: { deeper: "x" } } }],
      ["null-prototype object", nullProto, { a: 1 }],
      ["class instance", new Point(1, 2), { x: 1, y: 2 }],
      ["symbol keys dropped", { [Symbol("s")]: 1, kept: 2 }, { kept: 2 }],
      [
        "non-enumerable dropped",
        Object.defineProperty({ a: 1 }, "hidden", { value: 2, enumerable: false }),
        { a: 1 },
      ],
      [
        "Map",
        new Map<unknown, unknown>([
          [1, "one"],
          ["two", { n: 2 }],
          [null, undefined],
        ]),
      ],
      ["Set", new Set([1, "a", { b: 2 }, undefined])],
      ["Error", new Error("plain")],
      ["Error without message", new Error()],
      ["TypeError", new TypeError("type")],
      ["RangeError with extra props", withCode],
      ["SyntaxError", new SyntaxError("syntax")],
      ["ReferenceError", new ReferenceError("reference")],
      ["EvalError", new EvalError("eval")],
      ["URIError", new URIError("uri")],
      ["AggregateError", new AggregateError([new Error("inner"), 1], "many")],
      ["Error with cause", new Error("outer", { cause: new TypeError("inner") })],
      ["custom error name", new MyError("mine"), Object.assign(new Error("mine"), { name: "MyError" })],
      ["Int8Array", new Int8Array([-1, 2, -3])],
      ["Uint8Array", new Uint8Array([0, 255, 7, 8])],
      ["Uint8ClampedArray", new Uint8ClampedArray([0, 255])],
      ["Int16Array", new Int16Array([-30000, 2])],
      ["Uint16Array", new Uint16Array([65535])],
      ["Int32Array", new Int32Array([-1, 1 << 30])],
      ["Uint32Array", new Uint32Array([4294967295])],
      ["Float32Array", new Float32Array([1.5, Number.NaN, -0])],
      ["Float64Array", new Float64Array([Math.PI, Number.NEGATIVE_INFINITY])],
      ["BigInt64Array", new BigInt64Array([-1n, 2n ** 62n])],
      ["BigUint64Array", new BigUint64Array([2n ** 64n - 1n])],
      ["empty typed array", new Float64Array(0)],
      [
        "typed array view with byteOffset",
        new Uint16Array(offsetBuffer, 2, 3),
        new Uint16Array([0x0302, 0x0504, 0x0706]),
      ],
      ["ArrayBuffer", offsetBuffer.slice(0, 5)],
      ["empty ArrayBuffer", new ArrayBuffer(0)],
      [
        "DataView with byteOffset",
        new DataView(offsetBuffer, 3, 4),
        new DataView(new Uint8Array([3, 4, 5, 6]).buffer),
      ],
      ["1000 nested arrays", nest(1000, (inner) => [inner])],
      ["1000 nested objects", nest(1000, (inner) => ({ inner }))],
      [
        "1000 nested Maps, Sets and Errors",
        nest(1000, (inner) =>
          inner instanceof Map
            ? new Set([inner])
            : inner instanceof Set
              ? new Error("e", { cause: inner })
              : new Map([[1, inner]]),
        ),
      ],
    ];

    it.each(cases)("%s", (_name, value, expected = value) => {
      const decoded = roundTrip(value);
      if (typeof expected !== "object" || expected === null) expect(Object.is(decoded, expected)).toBe(true);
      expect(decoded).toStrictEqual(expected);
    });

    it("keeps sparse arrays exact: holes, length and own keys", () => {
      const decoded = roundTrip(sparse) as unknown[];
      expect(decoded.length).toBe(5);
      expect(Object.keys(decoded)).toEqual(["0", "2"]);
    });

    it("keeps special numbers inside containers", () => {
      const decoded = roundTrip({ z: -0, n: [Number.NaN, -0] }) as { z: number; n: number[] };
      expect(Object.is(decoded.z, -0)).toBe(true);
      expect(Object.is(decoded.n[1], -0)).toBe(true);
      expect(decoded.n[0]).toBeNaN();
    });

    it("createHostCodec never sends a host stack: Error values cross with an empty stack", () => {
      const decoded = host.decode(createHostCodec().encode(new TypeError("t"), "context", MB)) as TypeError;
      expect([decoded instanceof TypeError, decoded.message, decoded.stack]).toEqual([true, "t", ""]);
    });

    it("keeps error details: constructor, name, message, stack and extra props", () => {
      const original = new AggregateError([new Error("a")], "agg", { cause: "why" });
      original.stack = "AggregateError: agg\n    at guest (sandbox.js:1:1)";
      const decoded = roundTrip(original) as AggregateError;
      expect(decoded).toBeInstanceOf(AggregateError);
      expect(decoded.errors).toStrictEqual([new Error("a")]);
      expect(decoded.cause).toBe("why");
      expect(decoded.stack).toBe(original.stack);
      expect(Object.getOwnPropertyDescriptor(decoded, "stack")).toMatchObject({ enumerable: false });
      expect(Object.keys(decoded)).toEqual([]);

      const custom = roundTrip(new MyError("mine")) as Error;
      expect(Object.getPrototypeOf(custom)).toBe(Error.prototype);
      expect(custom.name).toBe("MyError");
      expect(Object.keys(custom)).toEqual(["name"]);

      const renamed = Object.defineProperty(new TypeError("t"), "name", { value: "Odd", enumerable: false });
      const decodedRenamed = roundTrip(renamed) as Error;
      expect([Object.getPrototypeOf(decodedRenamed), decodedRenamed.name]).toEqual([Error.prototype, "Odd"]);
      expect(Object.keys(decodedRenamed)).toEqual([]);
    });

    it("copies only the viewed bytes, into a fresh buffer", () => {
      const decoded = roundTrip(new Uint16Array(offsetBuffer, 2, 3)) as Uint16Array;
      expect([decoded.byteOffset, decoded.buffer.byteLength]).toEqual([0, 6]);
      const view = roundTrip(new DataView(offsetBuffer, 3, 4)) as DataView;
      expect([view.byteOffset, view.byteLength, [...new Uint8Array(view.buffer)]]).toEqual([
        0,
        4,
        [3, 4, 5, 6],
      ]);
    });

    it("keeps shared references and cycles by identity", () => {
      const shared = { s: 1 };
      const cyclic: Record<string, unknown> = { shared, again: shared, list: [shared] };
      cyclic.self = cyclic;
      const list: unknown[] = [shared];
      list.push(list);
      const key = { k: true };
      const map = new Map<unknown, unknown>([[key, key]]);
      map.set("map", map);
      const set = new Set<unknown>([key]);
      set.add(set);
      const error = new Error("loop") as Error & { self?: unknown };
      error.self = error;
      const decoded = roundTrip({ cyclic, list, map, set, error, key, date: [shared] }) as {
        cyclic: Record<string, unknown> & { list: unknown[] };
        list: unknown[];
        map: Map<unknown, unknown>;
        set: Set<unknown>;
        error: Error & { self?: unknown };
        key: object;
      };
      const { cyclic: c, list: l, map: m, set: s, error: e, key: k } = decoded;
      expect(c.self).toBe(c);
      expect(c.again).toBe(c.shared);
      expect(c.list[0]).toBe(c.shared);
      expect(l[0]).toBe(c.shared);
      expect(l[1]).toBe(l);
      const [mapKey] = [...m.keys()];
      expect(mapKey).toBe(k);
      expect(m.get(k)).toBe(k);
      expect(m.get("map")).toBe(m);
      expect(s.has(k)).toBe(true);
      expect(s.has(s)).toBe(true);
      expect(e.self).toBe(e);
      expect(c).toEqual({ shared: { s: 1 }, again: { s: 1 }, list: [{ s: 1 }], self: c });
    });

    it("runs each getter once and keeps its value", () => {
      let calls = 0;
      const value = {
        get counted() {
          calls++;
          return calls;
        },
      };
      const decoded = roundTrip(value);
      expect(decoded).toStrictEqual({ counted: 1 });
      expect(calls).toBe(1);
      expect(Object.getOwnPropertyDescriptor(decoded, "counted")).toEqual({
        value: 1,
        writable: true,
        enumerable: true,
        configurable: true,
      });
      // Accessors on the prototype (class getters) are not own properties: dropped.
      expect(roundTrip(new Point(2, 3))).toStrictEqual({ x: 2, y: 3 });
    });

    it("follows getters that mutate the value being encoded", () => {
      const object: Record<string, unknown> = {
        get first() {
          delete object.second;
          object.late = "added";
          return 1;
        },
        second: 2,
        third: 3,
      };
      expect(roundTrip(object)).toStrictEqual({ first: 1, third: 3 });
      const list: unknown[] = [];
      Object.defineProperty(list, 0, {
        enumerable: true,
        get() {
          list.push("more");
          list.length = 5;
          return "zero";
        },
      });
      list.push("one");
      // The getter grew the array; the length read first is kept.
      expect(roundTrip(list)).toStrictEqual(["zero", "one"]);
    });

    it("defines __proto__ keys as own properties and pollutes nothing", () => {
      const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as object;
      const decoded = roundTrip(value) as Record<string, unknown>;
      expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
      expect(Object.keys(decoded)).toEqual(["__proto__", "a"]);
      expect(Object.getOwnPropertyDescriptor(decoded, "__proto__")?.value).toStrictEqual({ polluted: true });
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it("writes the documented text", () => {
      const table: [unknown, string][] = [
        [1.5, "1.5"],
        ["s", '"s"'],
        ['q"\\\n\ud800😀', String.raw`"q\"\\\n\ud800😀"`],
        [null, "null"],
        // biome-ignore lint/suspicious/noSparseArray: a hole
        [[undefined, , -0, Number.NaN, 10n], '["a",[["u"],["h"],["n","-0"],["n","NaN"],["b","10"]]]'],
        [{ a: [] }, '["o",[["a",["a",[]]]]]'],
        [new Map([[1, new Set([2])]]), '["M",[[1,["S",[2]]]]]'],
        [new Date(Number.NaN), '["D","NaN"]'],
        [/a/gi, '["R","a","gi"]'],
        [new Uint8Array([1, 2, 3, 4]), '["T","Uint8Array","AQIDBA=="]'],
        [new DataView(new ArrayBuffer(2)), '["V","AAA="]'],
        [new ArrayBuffer(1), '["B","AA=="]'],
        [
          Object.assign(new TypeError("m"), { stack: "s", code: 1 }),
          '["E","TypeError","m","s",[["code",1]]]',
        ],
      ];
      const shared = {};
      table.push([[shared, [shared]], '["a",[["o",[]],["a",[["r",1]]]]]']);
      for (const [value, text] of table) expect(host.encode(value, "result", MB)).toBe(text);
    });
  });

  describe("refusals", () => {
    const sab = new SharedArrayBuffer(8);
    let revoked: object;
    {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      revoked = proxy;
    }
    const deepArrays = nest(1001, (inner) => [inner]);
    const deepObjects = nest(1001, (inner) => ({ a: inner }));
    const deepPath = (segment: string) => `result${segment.repeat(1000)}`;
    const lyingArray = new Proxy([], {
      get: (target, key) => (key === "length" ? -1 : Reflect.get(target, key)),
    });
    const cases: [string, unknown, string, string][] = [
      ["a function", () => 1, "result", "function"],
      ["a class", class {}, "result", "function"],
      ["a Proxy-wrapped function", new Proxy(() => 1, {}), "result", "function"],
      ["a function in an object", { items: [0, 1, 2, { fn() {} }] }, "result.items[3].fn", "function"],
      ["a function under an odd key", { "a b": () => 1 }, 'result["a b"]', "function"],
      ["a function in nested arrays", [1, [2, () => 1]], "result[1][1]", "function"],
      ["a function as a Map value", new Map([["k", () => 1]]), 'result.get("k")', "function"],
      ["under a number Map key", new Map([[2, { f: () => 1 }]]), "result.get(2).f", "function"],
      ["a function as a Map key", new Map([[() => 1, 1]]), "result.keys()[0]", "function"],
      [
        "under an object Map key",
        new Map<object, unknown>([
          [{}, 1],
          [{}, Symbol("s")],
        ]),
        "result.values()[1]",
        "symbol",
      ],
      ["a Set member", new Set([1, Symbol("s")]), "result.values()[1]", "symbol"],
      ["an Error's extra prop", Object.assign(new Error("e"), { fn: () => 1 }), "result.fn", "function"],
      ["an Error's cause", new Error("e", { cause: Symbol("c") }), "result.cause", "symbol"],
      ["a symbol", Symbol("s"), "result", "symbol"],
      ["a WeakMap", { w: new WeakMap() }, "result.w", "WeakMap"],
      ["a WeakSet", new WeakSet(), "result", "WeakSet"],
      ["a WeakRef", new WeakRef({}), "result", "WeakRef"],
      ["a FinalizationRegistry", new FinalizationRegistry(() => {}), "result", "FinalizationRegistry"],
      ["a Promise", [Promise.resolve(1)], "result[0]", "Promise"],
      ["a Promise subclass", new (class extends Promise<void> {})(() => {}), "result", "Promise"],
      ["a SharedArrayBuffer", sab, "result", "SharedArrayBuffer"],
      ["a view on a SharedArrayBuffer", { v: new Int32Array(sab) }, "result.v", "SharedArrayBuffer"],
      ["a DataView on a SharedArrayBuffer", new DataView(sab), "result", "SharedArrayBuffer"],
      ["a boxed number", new Number(1), "result", "Number object"],
      ["a boxed string", new String("s"), "result", "String object"],
      ["a boxed boolean", new Boolean(false), "result", "Boolean object"],
      ["a boxed BigInt", Object(1n), "result", "BigInt object"],
      ["a boxed symbol", Object(Symbol("s")), "result", "Symbol object"],
      ["a revoked Proxy", { p: revoked }, "result.p", "revoked Proxy"],
      ["a Proxy lying about its array length", lyingArray, "result", "array with an invalid length"],
      ["1001 nested arrays", deepArrays, deepPath("[0]"), "nested deeper than 1000 levels"],
      ["1001 nested objects", deepObjects, deepPath(".a"), "nested deeper than 1000 levels"],
    ];

    it.each(cases)("%s", (_name, value, path, what) => {
      const record = thrown(() => host.encode(value, "result", MB)) as NotTransferableRecord;
      expect(record).toStrictEqual({ kind: "not-transferable", path, what });
      expect(Object.isFrozen(record)).toBe(true);
      expect(host.isNotTransferable(record)).toBe(true);
    });

    const shared = "y".repeat(30);
    const budgetCases: [string, unknown, number, string][] = [
      ["a long string", { text: "x".repeat(100) }, 100, "result.text"],
      ["a long key", { ["k".repeat(100)]: 1 }, 100, `result.${"k".repeat(100)}`],
      ["many small items", new Array(1000).fill(1), 100, "result[22]"],
      ["a string referenced many times", [shared, shared, shared], 100, "result[1]"],
      ["holes", new Array(1000), 100, "result[7]"],
      ["bytes", { bytes: new Uint8Array(1000) }, 1000, "result.bytes"],
      ["a huge BigInt", [10n ** 100_000n], 1000, "result[0]"],
      ["a Map value", new Map([[1, "z".repeat(600)]]), 1000, "result.get(1)"],
    ];
    it.each(budgetCases)("budget: %s", (_name, value, maxBytes, path) => {
      expect(thrown(() => host.encode(value, "result", maxBytes))).toStrictEqual({
        kind: "not-transferable",
        path,
        what: `larger than ${maxBytes} bytes`,
      });
    });

    it("refuses exactly when the text would exceed the budget", () => {
      const text = host.encode({ a: "abc" }, "result", MB);
      expect(host.encode({ a: "abc" }, "result", text.length * 2)).toBe(text);
      expect(thrown(() => host.encode({ a: "abc" }, "result", text.length * 2 - 1))).toMatchObject({
        kind: "not-transferable",
      });
    });

    it("names the root as given", () => {
      expect(thrown(() => host.encode({ f: () => 1 }, "args[2]", MB))).toStrictEqual({
        kind: "not-transferable",
        path: "args[2].f",
        what: "function",
      });
    });

    it("lets a throw from a getter or a trap propagate unchanged", () => {
      const boom = new Error("boom");
      expect(
        thrown(() =>
          host.encode(
            {
              get x() {
                throw boom;
              },
            },
            "result",
            MB,
          ),
        ),
      ).toBe(boom);
      const trap = new Proxy(
        {},
        {
          ownKeys() {
            throw 42;
          },
        },
      );
      expect(thrown(() => host.encode([trap], "result", MB))).toBe(42);
    });

    it("tells its records from look-alikes", () => {
      expect(host.isNotTransferable({ kind: "not-transferable", path: "result", what: "function" })).toBe(
        false,
      );
      expect(host.isNotTransferable(undefined)).toBe(false);
      const other = createHostCodec();
      expect(other.isNotTransferable(thrown(() => host.encode(Symbol(), "result", MB)))).toBe(false);
    });

    it("rejects a bad maxBytes", () => {
      expect(thrown(() => host.encode(1, "result", Number.NaN))).toBeInstanceOf(TypeError);
    });
  });

  describe("hostile proxies", () => {
    it("encodes what the traps report, and keeps the encoder's invariants", () => {
      let gets = 0;
      const liar = new Proxy(
        { a: 1 },
        {
          getPrototypeOf: () => Map.prototype,
          ownKeys: () => ["a", "b", "a2"],
          getOwnPropertyDescriptor: (_target, key) =>
            key === "a2" ? undefined : { value: `own ${String(key)}`, enumerable: true, configurable: true },
          get: () => {
            gets++;
            return gets;
          },
        },
      );
      expect(roundTrip({ liar })).toStrictEqual({ liar: { a: "own a", b: "own b" } });

      // A prototype chain that never ends.
      const endless = new Proxy({ kept: true }, { getPrototypeOf: () => ({}) });
      expect(roundTrip(endless)).toStrictEqual({ kept: true });

      // Pretending to be an error through the prototype makes it an Error of the fields it reports.
      const fake = new Proxy(
        { code: 7 },
        {
          getPrototypeOf: () => TypeError.prototype,
          get: (target, key) =>
            key === "name" ? "TypeError" : key === "message" ? "faked" : Reflect.get(target, key),
        },
      );
      expect(roundTrip(fake)).toStrictEqual(Object.assign(new TypeError("faked"), { code: 7 }));

      // An array proxy whose elements change on every read: each index is read once.
      let reads = 0;
      const moving = new Proxy([0, 0, 0], {
        get: (target, key) => (key === "length" ? Reflect.get(target, key) : ++reads),
      });
      expect(roundTrip(moving)).toStrictEqual([1, 2, 3]);
    });
  });

  describe("decode of malformed text", () => {
    const deep = `${'["a",['.repeat(1001)}${"]]".repeat(1001)}`;
    const cases: [string, unknown][] = [
      ["not a string", 42],
      ["empty", ""],
      ["not JSON", "{"],
      ["an object", '{"__proto__":1}'],
      ["an empty list", "[]"],
      ["an unknown tag", '["x"]'],
      ["a hole outside an array", '["h"]'],
      ["a non-string tag", "[[1]]"],
      ["wrong arity", '["u",1]'],
      ["a bad special number", '["n","5"]'],
      ["a bad BigInt", '["b","12a"]'],
      ["an empty BigInt", '["b",""]'],
      ["a forward reference", '["r",0]'],
      ["a negative reference", '["a",[["o",[]],["r",-1]]]'],
      ["a fractional reference", '["a",[["o",[]],["r",0.5]]]'],
      ["array items not a list", '["a",1]'],
      ["a bad hole inside an array", '["a",[["h",1]]]'],
      ["a non-string key", '["o",[[1,2]]]'],
      ["a half entry", '["o",[["a"]]]'],
      ["Map entries not pairs", '["M",[[1]]]'],
      ["Set items not a list", '["S",{}]'],
      ["Error fields missing", '["E","Error","m"]'],
      ["Error name not a string", '["E",1,"m","s",[]]'],
      ["an unknown typed array", '["T","Foo","AA=="]'],
      ["inherited names are not typed arrays", '["T","constructor","AA=="]'],
      ["bytes that do not fill the elements", '["T","Uint16Array","AA=="]'],
      ["base64 of a bad length", '["B","A"]'],
      ["base64 with bad characters", '["B","@@@@"]'],
      ["base64 with padding inside", '["B","AA==AAAA"]'],
      ["base64 with non-ASCII", '["V","AAA\u00e9"]'],
      ["a bad RegExp source", '["R","(","g"]'],
      ["bad RegExp flags", '["R","a","zz"]'],
      ["a bad Date", '["D","x"]'],
      ["nested deeper than 1000 levels", deep],
    ];
    it.each(cases)("%s", (_name, text) => {
      expect(thrown(() => host.decode(text as string))).toBeInstanceOf(TypeError);
    });

    it("says why", () => {
      expect(thrown(() => host.decode(deep))).toMatchObject({
        message: "decode: malformed codec text (nested deeper than 1000 levels)",
        reason: "nested deeper than 1000 levels",
      });
      expect(thrown(() => host.decode('["B","A"]'))).toMatchObject({ reason: "bad base64" });
      const atTheLimit = `${'["a",['.repeat(1000)}${"]]".repeat(1000)}`;
      expect(host.encode(host.decode(atTheLimit), "result", MB)).toBe(atTheLimit);
    });
  });

  describe("across realms", () => {
    it("encodes a value of a vm context and decodes it with the host's constructors", () => {
      const guest = realm();
      const value = guest.run(`({
        n: [1, -0, NaN, 2n], d: new Date(5), r: /x/y, m: new Map([[{ k: 1 }, new Set([1])]]),
        e: new TypeError("t", { cause: 1 }), u8: new Uint8Array([1, 2]), b: new ArrayBuffer(2),
        sparse: [1, , ], inst: new (class A { constructor() { this.a = 1 } })(),
      })`);
      const decoded = host.decode(guest.codec.encode(value, "result", MB)) as Record<string, object>;
      expect(decoded).toStrictEqual({
        n: [1, -0, Number.NaN, 2n],
        d: new Date(5),
        r: /x/y,
        m: new Map([[{ k: 1 }, new Set([1])]]),
        e: new TypeError("t", { cause: 1 }),
        u8: new Uint8Array([1, 2]),
        b: new ArrayBuffer(2),
        // biome-ignore lint/suspicious/noSparseArray: a trailing hole
        sparse: [1, ,],
        inst: { a: 1 },
      });
      expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
      expect(decoded.d).toBeInstanceOf(Date);
      expect(decoded.m).toBeInstanceOf(Map);
      expect(decoded.e).toBeInstanceOf(TypeError);
      expect(decoded.n).toBeInstanceOf(Array);
      expect(decoded.u8).toBeInstanceOf(Uint8Array);
    });

    it("encodes a host value and decodes it with the context's constructors", () => {
      const guest = realm();
      const text = host.encode(
        { list: [1], map: new Map([[1, 2]]), error: new RangeError("r") },
        "args[0]",
        MB,
      );
      const decoded = guest.codec.decode(text) as { list: unknown; map: unknown; error: unknown };
      expect(Object.getPrototypeOf(decoded)).toBe(guest.run("Object.prototype"));
      expect(Object.getPrototypeOf(decoded.list)).toBe(guest.run("Array.prototype"));
      expect(Object.getPrototypeOf(decoded.map)).toBe(guest.run("Map.prototype"));
      expect(Object.getPrototypeOf(decoded.error)).toBe(guest.run("RangeError.prototype"));
      expect(guest.codec.encode(decoded, "args[0]", MB)).toBe(text);
      // Its refusals are records made with the context's Object.
      const record = thrown(() => guest.codec.encode(guest.run("[() => 1]"), "result", MB));
      expect(Object.getPrototypeOf(record)).toBe(guest.run("Object.prototype"));
      expect(record).toEqual({ kind: "not-transferable", path: "result[0]", what: "function" });
    });

    it("encodes values of another realm the same way as that realm's own codec", () => {
      const guest = realm();
      const value = guest.run(`[
        { a: 1 }, Object.create(null), new Map([[1, 2]]), new Set([3]), new Date(9), /x/g, new RangeError("r"),
        new Uint8Array([1]), new ArrayBuffer(1), Object.assign(Object.create(Object.create(null)), { deep: true }),
      ]`);
      expect(host.encode(value, "result", MB)).toBe(guest.codec.encode(value, "result", MB));
      for (const [code, what] of [
        ["Promise.resolve()", "Promise"],
        ["new WeakMap()", "WeakMap"],
        ["new Number(1)", "Number object"],
        ["() => 1", "function"],
      ]) {
        expect(thrown(() => host.encode(guest.run(code as string), "result", MB))).toEqual({
          kind: "not-transferable",
          path: "result",
          what,
        });
      }
    });

    it("decodes exactly into a realm whose Object.prototype is frozen or has setters", () => {
      const guest = realm();
      guest.run(`
        Object.defineProperty(Object.prototype, "evil", { set() { throw new Error("setter ran"); } });
        Object.freeze(Object.prototype);
      `);
      const decoded = guest.codec.decode(
        host.encode(
          JSON.parse('{"toString": 1, "constructor": 2, "evil": 3, "__proto__": 4, "plain": 5}'),
          "args[0]",
          MB,
        ),
      ) as Record<string, unknown>;
      expect(Object.getPrototypeOf(decoded)).toBe(guest.run("Object.prototype"));
      expect(
        Object.entries(Object.getOwnPropertyDescriptors(decoded)).map(([key, d]) => [
          key,
          d.value,
          d.writable,
        ]),
      ).toEqual([
        ["toString", 1, true],
        ["constructor", 2, true],
        ["evil", 3, true],
        ["__proto__", 4, true],
        ["plain", 5, true],
      ]);
    });

    it("still encodes and decodes correctly after the context tampers with its built-ins", () => {
      const guest = realm();
      // Stacks are set up front: formatting one would run the test runner's prepareStackTrace, which
      // the tampering below breaks (the kernel locks the guest's own prepareStackTrace).
      const value = guest.run(`
        const fixed = (e) => { e.stack = "fixed"; return e; };
        ({
          list: [1, , "two"], map: new Map([["k", [1]]]), set: new Set([1]), date: new Date(7), re: /a/g,
          bytes: new Uint16Array([1, 2]), error: fixed(new AggregateError([fixed(new Error("i"))], "agg")),
          obj: { n: null },
        })`);
      const GuestTypeError = guest.run("TypeError") as TypeErrorConstructor;
      guest.run(`
        const thrower = () => { throw new Error("tampered"); };
        const define = Object.defineProperty;
        Map.prototype.forEach = thrower;
        Map.prototype.entries = thrower;
        Map.prototype.get = thrower;
        Map.prototype.set = thrower;
        Map.prototype[Symbol.iterator] = thrower;
        define(Map.prototype, "size", { get: thrower });
        Set.prototype.add = thrower;
        Set.prototype.values = thrower;
        Set.prototype[Symbol.iterator] = thrower;
        Array.prototype[Symbol.iterator] = thrower;
        Array.prototype.push = thrower;
        Array.isArray = () => false;
        define(Array.prototype, "1", { get: () => "from the prototype", set: thrower });
        define(Array.prototype, "3", { get: () => "from the prototype", set: thrower });
        Object.prototype.toJSON = () => "hacked";
        String.prototype.toJSON = () => "hacked";
        Object.prototype.get = function () { return "descriptor poisoned"; };
        define(Object.prototype, "__proto__", { set: thrower });
        Object.keys = () => [];
        Object.defineProperty = thrower;
        Object.getOwnPropertyDescriptor = thrower;
        Reflect.apply = thrower;
        Function.prototype.call = thrower;
        Function.prototype.apply = thrower;
        Function.prototype.bind = thrower;
        JSON.stringify = thrower;
        JSON.parse = thrower;
        Date.prototype.getTime = () => 0;
        define(RegExp.prototype, "flags", { get: () => "x" });
        define(RegExp.prototype, "source", { get: () => "tampered" });
        RegExp.prototype.exec = thrower;
        define(Object.getPrototypeOf(Uint8Array.prototype), "buffer", { get: thrower });
        define(Object.getPrototypeOf(Uint8Array.prototype), "length", { get: thrower });
        String.prototype.charCodeAt = thrower;
        globalThis.Map = thrower;
        globalThis.TypeError = thrower;
        globalThis.Number = thrower;
        // The codec binds its methods and builds its tables on first use, after all of the above.
        Object.getPrototypeOf(Int16Array.prototype).fill = thrower;
        WeakSet.prototype.add = thrower;
        WeakSet.prototype.has = thrower;
        Object.freeze = thrower;
        Object.setPrototypeOf = thrower;
        Reflect.getPrototypeOf = thrower;
        globalThis.Symbol = thrower;
        globalThis.WeakSet = thrower;
        globalThis.Error = thrower;
        globalThis.AggregateError = thrower;
        globalThis.Int16Array = thrower;
        globalThis.Uint16Array = thrower;
      `);
      const expected = {
        // biome-ignore lint/suspicious/noSparseArray: a hole
        list: [1, , "two"],
        map: new Map([["k", [1]]]),
        set: new Set([1]),
        date: new Date(7),
        re: /a/g,
        bytes: new Uint16Array([1, 2]),
        error: new AggregateError([new Error("i")], "agg"),
        obj: { n: null },
      };
      const text = guest.codec.encode(value, "result", MB);
      expect(host.decode(text)).toStrictEqual(expected);
      // The tampered context decodes too, with its own (now unreachable) constructors.
      const again = guest.codec.decode(text);
      expect(guest.codec.encode(again, "result", MB)).toBe(text);
      expect(Object.keys(again as object)).toEqual(Object.keys(expected));
      expect(thrown(() => guest.codec.decode('["x"]'))).toBeInstanceOf(GuestTypeError);
      // Refusals still work after tampering.
      expect(thrown(() => guest.codec.encode(guest.run("({ p: Promise.resolve() })"), "result", MB))).toEqual(
        {
          kind: "not-transferable",
          path: "result.p",
          what: "Promise",
        },
      );
    });
  });
});
