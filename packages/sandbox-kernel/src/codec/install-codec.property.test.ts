import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NotTransferableRecord } from "../kit.js";
import { installCodec } from "./install-codec.js";

// Property tests of the value codec: it round-trips what it promises (README: plain data, Date,
// RegExp, Map, Set, BigInt, undefined, NaN/±Infinity/-0, typed arrays, shared references),
// refuses the rest with the exact path, and throws nothing but its own records.

const MB = 1 << 20;
const codec = (() => {
  const kit = {} as Parameters<typeof installCodec>[0];
  installCodec(kit);
  return kit;
})();
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
};

const key = fc.string({ unit: fc.constantFrom(..."abcxyz"), minLength: 1, maxLength: 4 });
const leaf = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.NaN, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 8 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.bigInt(),
  // Valid dates only: node's isDeepStrictEqual never equates two invalid ones (NaN !== NaN); an
  // invalid Date has its own test below.
  fc.date({ noInvalidDate: true }),
  fc.uint8Array({ maxLength: 8 }),
  fc.float64Array({ maxLength: 4 }),
  fc.constantFrom(/a+b/gi, /x/y, /[\u{1F600}]/u),
);
/** Values the codec promises to carry, nested. */
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    tie("array"),
    tie("object"),
    tie("map"),
    tie("set"),
  ),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(key, fc.string({ maxLength: 6 })), tie("value"), {
    maxKeys: 4,
    noNullPrototype: true,
  }),
  map: fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((entries) => new Map(entries)),
  set: fc.array(tie("value"), { maxLength: 3 }).map((items) => new Set(items)),
}));

/** A step into a container, and how the codec names it. */
type Step = { kind: "key"; key: string } | { kind: "index"; index: number };
const step: fc.Arbitrary<Step> = fc.oneof(
  key.map((k) => ({ kind: "key" as const, key: k })),
  fc.integer({ min: 0, max: 3 }).map((index) => ({ kind: "index" as const, index })),
);
const poison = fc.constantFrom(
  ["function", () => 1] as const,
  ["symbol", Symbol("s")] as const,
  ["WeakMap", new WeakMap()] as const,
  ["Promise", Promise.resolve(1)] as const,
);

function plant(steps: readonly Step[], inner: unknown): unknown {
  return steps.reduceRight<unknown>((child, s) => {
    if (s.kind === "key") return { before: 1, [s.key]: child };
    const list: unknown[] = new Array(s.index + 1).fill(0);
    list[s.index] = child;
    return list;
  }, inner);
}

describe("the value codec (properties)", () => {
  it("round-trips every value it promises, shapes and prototypes included", () => {
    fc.assert(
      fc.property(value, (v) => {
        const back = codec.decode(codec.encode(v, "result", MB));
        expect(isDeepStrictEqual(back, v)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("round-trips an invalid Date as an invalid Date", () => {
    const back = codec.decode(codec.encode({ at: new Date(Number.NaN) }, "result", MB)) as { at: unknown };
    expect(back.at).toBeInstanceOf(Date);
    expect(Number.isNaN((back.at as Date).getTime())).toBe(true);
  });

  it("keeps shared references and cycles as such", () => {
    fc.assert(
      fc.property(value, (v) => {
        const shared = { v };
        const cyclic: Record<string, unknown> = { shared, again: shared };
        cyclic.self = cyclic;
        const back = codec.decode(codec.encode(cyclic, "result", MB)) as typeof cyclic;
        expect([back.self === back, back.shared === back.again]).toEqual([true, true]);
      }),
      { numRuns: 100 },
    );
  });

  it("refuses a function, symbol, WeakMap or promise anywhere, naming its exact path", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 5 }), poison, (steps, [what, bad]) => {
        const path = `result${steps.map((s) => (s.kind === "key" ? `.${s.key}` : `[${s.index}]`)).join("")}`;
        const record = thrown(() => codec.encode(plant(steps, bad), "result", MB)) as NotTransferableRecord;
        expect(record).toStrictEqual({ kind: "not-transferable", path, what });
        expect(codec.isNotTransferable(record)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("encodes anything or refuses it with its own record — never a host exception", () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withNullPrototype: true,
      withObjectString: true,
      withSet: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
    });
    fc.assert(
      fc.property(fc.oneof(anything, fc.func(fc.anything())), (v) => {
        let text: string | undefined;
        const error = thrown(() => {
          text = codec.encode(v, "result", MB);
        });
        if (text === undefined) expect(codec.isNotTransferable(error)).toBe(true);
        else expect(thrown(() => codec.decode(text as string))).toBeUndefined();
      }),
      { numRuns: 300 },
    );
  });

  it("decodes any text or refuses it as malformed codec text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 40 }), fc.json()), (text) => {
        const error = thrown(() => codec.decode(text));
        if (error !== undefined) {
          expect(error).toBeInstanceOf(TypeError);
          expect((error as Error).message).toMatch(/^decode: malformed codec text/);
        }
      }),
      { numRuns: 300 },
    );
  });
});
