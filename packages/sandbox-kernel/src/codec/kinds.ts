import type { Intrinsics } from "./intrinsics.js";
import type { ErrorCtor, Uncurried } from "./shared.js";

/**
 * GUEST REALM. What kind of value an object is, told by its prototype chain and confirmed by
 * brand getters (never by a property of the value); the bound intrinsics, the lazily built
 * tables, and the refusal marks.
 */
export function makeKinds(I: Intrinsics) {
  const {
    MapCtor,
    ObjectPrototype,
    RegExpPrototype,
    WeakSetCtor,
    apply,
    errorCtors,
    freeze,
    functionBind,
    functionCall,
    getPrototypeOf,
    iteratorSymbol,
    kindCtors,
    raw,
    setPrototypeOf,
    typedCtors,
  } = I;

  const bindCall = (fn: unknown): Uncurried => apply(functionBind, functionCall, [fn]) as Uncurried;
  const bindIf = (fn: unknown): Uncurried | undefined =>
    typeof fn === "function" ? bindCall(fn) : undefined;
  /** `true` when `fn` accepts `value` as its receiver: a brand check that never looks at `value`'s properties. */
  const brand = (fn: Uncurried | undefined, value: unknown, arg?: unknown): boolean => {
    if (fn === undefined) return false;
    try {
      fn(value, arg);
      return true;
    } catch {
      return false;
    }
  };
  /** A fresh array with no prototype: writing to it can never reach an inherited setter. */
  const list = <T>(): T[] => setPrototypeOf([], null) as T[];
  /**
   * A table made on its first use, from captured values only. Most tables serve one kind of
   * value (RegExp flags, typed arrays, base64, Errors); a run that never meets that kind does not
   * pay for it — in a fresh context, building them all took about 80 µs of the codec's first use.
   */
  const once = <T>(make: () => T): (() => T) => {
    let made: T | undefined;
    return () => {
      if (made === undefined) made = make();
      return made;
    };
  };

  const arrayJoin = bindCall(raw.arrayJoin);
  const typedSubarray = bindCall(raw.typedSubarray);
  const charCodeAt = bindCall(raw.charCodeAt) as (s: string, i: number) => number;
  const objectToString = bindCall(raw.objectToString) as (o: unknown) => string;
  const mapGet = bindCall(raw.mapGet);
  const mapSet = bindCall(raw.mapSet);
  const mapEntries = bindCall(raw.mapEntries);
  const mapIteratorNext = bindCall(raw.mapIteratorNext) as (
    it: unknown,
  ) => IteratorResult<[unknown, unknown]>;
  const mapSize = bindIf(raw.mapSize);
  const setAdd = bindCall(raw.setAdd);
  const setValues = bindCall(raw.setValues);
  const setIteratorNext = bindCall(raw.setIteratorNext) as (it: unknown) => IteratorResult<unknown>;
  const setSize = bindIf(raw.setSize);
  const weakSetAdd = bindCall(raw.weakSetAdd);
  const weakSetHas = bindCall(raw.weakSetHas);
  const dateGetTime = bindCall(raw.dateGetTime) as (d: unknown) => number;
  const regExpExec = bindCall(raw.regExpExec);
  /** What JSON escapes in a string: `"`, `\\`, control characters, lone surrogates (with `u`, a pair is one code point). */
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/u;
  const regExpSource = bindIf(raw.regExpSource);
  const regExpFlags = once(() => {
    const flags = list<[string, Uncurried]>();
    const flagLetters = "dgimsuvy";
    const flagGetters = [
      raw.hasIndices,
      raw.global,
      raw.ignoreCase,
      raw.multiline,
      raw.dotAll,
      raw.unicode,
      raw.unicodeSets,
      raw.sticky,
    ];
    for (let i = 0; i < flagGetters.length; i++) {
      const get = bindIf(flagGetters[i]);
      if (get !== undefined) flags[flags.length] = [flagLetters[i] as string, get];
    }
    return flags;
  });
  const arrayBufferByteLength = bindIf(raw.arrayBufferByteLength);
  const sharedArrayBufferByteLength = bindIf(raw.sharedArrayBufferByteLength);
  const typedArrayTag = bindIf(raw.typedArrayTag) as Uncurried;
  const typedArrayBuffer = bindIf(raw.typedArrayBuffer) as Uncurried;
  const typedArrayByteOffset = bindIf(raw.typedArrayByteOffset) as Uncurried;
  const typedArrayByteLength = bindIf(raw.typedArrayByteLength) as Uncurried;
  const dataViewBuffer = bindIf(raw.dataViewBuffer) as Uncurried;
  const dataViewByteOffset = bindIf(raw.dataViewByteOffset) as Uncurried;
  const dataViewByteLength = bindIf(raw.dataViewByteLength) as Uncurried;

  type TypedArrayCtor = new (buffer: ArrayBuffer) => ArrayBufferView;
  const typedArrays = once(() => {
    const table = setPrototypeOf({}, null) as Record<string, [TypedArrayCtor, number] | undefined>;
    const typedNames = [
      "Int8Array",
      "Uint8Array",
      "Uint8ClampedArray",
      "Int16Array",
      "Uint16Array",
      "Int32Array",
      "Uint32Array",
      "Float16Array",
      "Float32Array",
      "Float64Array",
      "BigInt64Array",
      "BigUint64Array",
    ];
    for (let i = 0; i < typedNames.length; i++) {
      const Ctor = typedCtors[i];
      // BYTES_PER_ELEMENT of a built-in constructor is neither writable nor configurable.
      if (typeof Ctor === "function") table[typedNames[i] as string] = [Ctor, Ctor.BYTES_PER_ELEMENT];
    }
    return table;
  });

  const ErrorCtor = errorCtors[0] as ErrorCtor;
  const errors = once(() => {
    const table = setPrototypeOf({}, null) as Record<string, ErrorCtor | undefined>;
    const errorNames = [
      "Error",
      "TypeError",
      "RangeError",
      "SyntaxError",
      "ReferenceError",
      "EvalError",
      "URIError",
      "AggregateError",
    ];
    for (let i = 0; i < errorNames.length; i++) {
      const Ctor = errorCtors[i];
      if (Ctor !== undefined) table[errorNames[i] as string] = Ctor;
    }
    return table;
  });
  /** An iterable with nothing in it that reads only its own properties (for `new AggregateError`). */
  const emptyIterable = once(() => {
    const doneResult = freeze(setPrototypeOf({ done: true, value: undefined }, null));
    const emptyIterator = freeze(setPrototypeOf({ next: () => doneResult }, null));
    const iterable = setPrototypeOf({}, null) as Record<symbol, () => unknown> & Iterable<unknown>;
    iterable[iteratorSymbol] = () => emptyIterator;
    return freeze(iterable as unknown as Iterable<unknown>);
  });

  // Kinds named by a prototype: a number is a data kind (checked by brand), a string a refusal.
  const PLAIN = 0;
  const MAP = 1;
  const SET = 2;
  const DATE = 3;
  const REGEXP = 4;
  const BUFFER = 5;
  const ERROR = 6;
  const FULL_CHECK = 7;
  const ARRAY = 8;
  const VIEW = 9;
  const kinds: (number | string)[] = [
    MAP,
    SET,
    DATE,
    REGEXP,
    BUFFER,
    ERROR,
    "Promise",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "FinalizationRegistry",
    "SharedArrayBuffer",
    "Number object",
    "String object",
    "Boolean object",
    "BigInt object",
    "Symbol object",
  ];
  const protoKinds = new MapCtor<unknown, number | string>();
  for (let i = 0; i < kindCtors.length; i++) {
    const Ctor = kindCtors[i];
    // A built-in constructor's `prototype` is neither writable nor configurable: safe to read late.
    if (typeof Ctor === "function") mapSet(protoKinds, (Ctor as { prototype: unknown }).prototype, kinds[i]);
  }
  const probe = freeze(setPrototypeOf({}, null));
  const weakMapHas = bindCall(raw.weakMapHas);
  const weakRefDeref = bindIf(raw.weakRefDeref);
  const registryUnregister = bindIf(raw.registryUnregister);
  const boxes = once(
    () =>
      [
        ["Number object", bindCall(raw.numberValueOf)],
        ["String object", bindCall(raw.stringValueOf)],
        ["Boolean object", bindCall(raw.booleanValueOf)],
        ["BigInt object", bindCall(raw.bigIntValueOf)],
        ["Symbol object", bindCall(raw.symbolValueOf)],
      ] as const,
  );

  const MAX_DEPTH = 1000;
  const DEEP = "nested deeper than 1000 levels";
  const MAX_PROTO_HOPS = 100;
  const BIG_SMALL = 2n ** 256n;

  const REFUSED = freeze(setPrototypeOf({}, null));
  const issued = new WeakSetCtor<object>();

  // ---- helpers shared by encode calls (no per-call state) ---------------------------------

  /** The kind of an object that is neither an array nor a view (see the prototype-kind table). */
  const fullCheck = (o: object): number | string => {
    if (brand(arrayBufferByteLength, o)) return BUFFER;
    if (brand(sharedArrayBufferByteLength, o)) return "SharedArrayBuffer";
    if (brand(dateGetTime, o)) return DATE;
    if (brand(regExpSource, o) && o !== RegExpPrototype) return REGEXP;
    if (brand(mapSize, o)) return MAP;
    if (brand(setSize, o)) return SET;
    if (brand(weakMapHas, o, probe)) return "WeakMap";
    if (brand(weakSetHas, o, probe)) return "WeakSet";
    if (brand(weakRefDeref, o)) return "WeakRef";
    if (brand(registryUnregister, o, probe)) return "FinalizationRegistry";
    const boxKinds = boxes();
    for (let i = 0; i < boxKinds.length; i++) {
      const box = boxKinds[i] as readonly [string, Uncurried];
      if (brand(box[1], o)) return box[0];
    }
    const tag = objectToString(o);
    if (tag === "[object Promise]") return "Promise";
    if (tag === "[object Error]") return ERROR;
    return PLAIN;
  };

  /** Classify `o` by its prototype chain, confirming data kinds by brand. */
  const classify = (o: object): number | string => {
    let proto = getPrototypeOf(o);
    if (proto === null) return PLAIN;
    let kind: number | string | undefined;
    for (let hops = 0; ; hops++) {
      if (proto === ObjectPrototype) return PLAIN;
      kind = mapGet(protoKinds, proto) as number | string | undefined;
      if (kind !== undefined) break;
      proto = getPrototypeOf(proto);
      if (proto === null || hops === MAX_PROTO_HOPS) {
        kind = FULL_CHECK;
        break;
      }
    }
    switch (kind) {
      case MAP:
        return brand(mapSize, o) ? MAP : fullCheck(o);
      case SET:
        return brand(setSize, o) ? SET : fullCheck(o);
      case DATE:
        return brand(dateGetTime, o) ? DATE : fullCheck(o);
      case REGEXP:
        return brand(regExpSource, o) ? REGEXP : fullCheck(o);
      case BUFFER:
        return brand(arrayBufferByteLength, o) ? BUFFER : fullCheck(o);
      case FULL_CHECK:
        return fullCheck(o);
      default:
        return kind;
    }
  };

  return {
    __proto__: null,
    ARRAY,
    BIG_SMALL,
    BUFFER,
    DATE,
    DEEP,
    ERROR,
    ErrorCtor,
    MAP,
    MAX_DEPTH,
    NEEDS_ESCAPE,
    PLAIN,
    REFUSED,
    REGEXP,
    SET,
    VIEW,
    arrayBufferByteLength,
    arrayJoin,
    brand,
    charCodeAt,
    classify,
    dataViewBuffer,
    dataViewByteLength,
    dataViewByteOffset,
    dateGetTime,
    emptyIterable,
    errors,
    issued,
    list,
    mapEntries,
    mapGet,
    mapIteratorNext,
    mapSet,
    once,
    regExpExec,
    regExpFlags,
    regExpSource,
    setAdd,
    setIteratorNext,
    setValues,
    typedArrayBuffer,
    typedArrayByteLength,
    typedArrayByteOffset,
    typedArrayTag,
    typedArrays,
    typedSubarray,
    weakSetAdd,
    weakSetHas,
  };
}

export type Kinds = ReturnType<typeof makeKinds>;
