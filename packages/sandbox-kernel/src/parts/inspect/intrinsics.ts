import type { AnyFunction, List, Uncurried } from "./shared.js";

/**
 * GUEST REALM. Every intrinsic inspect and format use, captured when the part installs: before
 * any guest code runs in the realm. Nothing else in inspect/ reads a global.
 */
export function captureIntrinsics() {
  const ReflectApply = Reflect.apply;
  const ownKeysOf = Reflect.ownKeys;
  const getOwnDescriptor = Reflect.getOwnPropertyDescriptor;
  const getPrototypeOf = Reflect.getPrototypeOf;
  const create = Object.create;
  const hasOwn = Object.hasOwn;
  const objectIs = Object.is;
  const isArray = Array.isArray;
  const StringCtor = String;
  const NumberCtor = Number;
  const numberIsNaN = Number.isNaN;
  const numberIsFinite = Number.isFinite;
  const NAN = Number.NaN;
  const parseIntFn = Number.parseInt;
  const parseFloatFn = Number.parseFloat;
  const mathSqrt = Math.sqrt;
  const mathRound = Math.round;
  const mathFloor = Math.floor;
  const mathMin = Math.min;
  const mathMax = Math.max;
  const jsonStringify = JSON.stringify;
  const MapCtor = Map;
  const SetCtor = Set;
  const Uint8ArrayCtor = Uint8Array;
  const SymbolToStringTag = Symbol.toStringTag;
  const SymbolIterator = Symbol.iterator;
  // A closure, not `call.bind(fn)`: binding costs a builtin call per intrinsic in every fresh
  // context, and most executions never format a value. A rest parameter makes its array without
  // the iterator protocol, so nothing a guest put on Array.prototype runs.
  const uncurry =
    <A extends unknown[], R>(fn: (...args: A) => R): Uncurried<A, R> =>
    (self: unknown, ...args: A): R =>
      ReflectApply(fn, self, args) as R;
  const getterOf = (target: object, key: string | symbol): AnyFunction | undefined => {
    const desc = getOwnDescriptor(target, key);
    return desc !== undefined && hasOwn(desc, "get") ? (desc.get as AnyFunction | undefined) : undefined;
  };
  const uncurryGetter = <R>(target: object, key: string | symbol): Uncurried<[], R> | undefined => {
    const getter = getterOf(target, key);
    return getter === undefined ? undefined : uncurry(getter as () => R);
  };

  const ObjectPrototype = Object.prototype;
  const FunctionPrototype = Function.prototype;
  const ErrorPrototype = Error.prototype;
  const PromisePrototype = Promise.prototype;
  const nativeIsError = (Error as unknown as { isError?: (value: unknown) => boolean }).isError;
  const arrayValues = Array.prototype.values;
  const ErrorCtor = Error;
  /**
   * Where an engine implements `error.stack` as an accessor, its intrinsic getter (safe to call).
   * Looked up on first use from a kernel-made error (making one formats a stack, which costs more
   * than installing most of this part): no guest code can change what a fresh error's own
   * `stack` is, and the `Error` used is the one captured here.
   */
  let errorStackGetterMemo: AnyFunction | undefined | null = null;
  const errorStackGetterOf = (): AnyFunction | undefined => {
    if (errorStackGetterMemo === null)
      errorStackGetterMemo = getterOf(new ErrorCtor(), "stack") ?? getterOf(ErrorPrototype, "stack");
    return errorStackGetterMemo;
  };

  const charCodeAt = uncurry(String.prototype.charCodeAt);
  const codePointAt = uncurry(String.prototype.codePointAt);
  const stringSlice = uncurry(String.prototype.slice);
  const stringIndexOf = uncurry(String.prototype.indexOf);
  const stringIncludes = uncurry(String.prototype.includes);
  const stringStartsWith = uncurry(String.prototype.startsWith);
  const stringEndsWith = uncurry(String.prototype.endsWith);
  const stringRepeat = uncurry(String.prototype.repeat);
  const padStart = uncurry(String.prototype.padStart);
  const padEnd = uncurry(String.prototype.padEnd);
  const numberToString = uncurry(Number.prototype.toString);
  const symbolToString = uncurry(Symbol.prototype.toString);
  const functionToString = uncurry(Function.prototype.toString);

  const numberValueOf = uncurry(Number.prototype.valueOf);
  const stringValueOf = uncurry(String.prototype.valueOf);
  const booleanValueOf = uncurry(Boolean.prototype.valueOf);
  const bigintValueOf = uncurry(BigInt.prototype.valueOf);
  const symbolValueOf = uncurry(Symbol.prototype.valueOf);

  const mapGet = uncurry(Map.prototype.get);
  const mapSet = uncurry(Map.prototype.set);
  const mapEntries = uncurry(Map.prototype.entries);
  const mapIteratorPrototype = getPrototypeOf(new MapCtor().entries()) as object;
  const mapIteratorNext = uncurry(
    (mapIteratorPrototype as { next: () => IteratorResult<[unknown, unknown]> }).next,
  );
  const mapSize = uncurryGetter<number>(Map.prototype, "size")!;
  const setAdd = uncurry(Set.prototype.add);
  const setHas = uncurry(Set.prototype.has);
  const setDelete = uncurry(Set.prototype.delete);
  const setValues = uncurry(Set.prototype.values);
  const setIteratorPrototype = getPrototypeOf(new SetCtor().values()) as object;
  const setIteratorNext = uncurry((setIteratorPrototype as { next: () => IteratorResult<unknown> }).next);
  const setSize = uncurryGetter<number>(Set.prototype, "size")!;
  const weakMapHas = uncurry(WeakMap.prototype.has);
  const weakSetHas = uncurry(WeakSet.prototype.has);

  const dateGetTime = uncurry(Date.prototype.getTime);
  const dateToISOString = uncurry(Date.prototype.toISOString);
  const regExpSource = uncurryGetter<string>(RegExp.prototype, "source")!;
  const regExpFlagGetters: List<Uncurried<[], boolean | undefined> | undefined> = create(null);
  const regExpFlagLetters = "dgimsuvy";
  const regExpFlagNames = [
    "hasIndices",
    "global",
    "ignoreCase",
    "multiline",
    "dotAll",
    "unicode",
    "unicodeSets",
    "sticky",
  ];
  for (let i = 0; i < regExpFlagNames.length; i++) {
    regExpFlagGetters[i] = uncurryGetter<boolean | undefined>(RegExp.prototype, regExpFlagNames[i]!);
  }

  const arrayBufferByteLength = uncurryGetter<number>(ArrayBuffer.prototype, "byteLength")!;
  const sharedArrayBufferByteLength =
    typeof SharedArrayBuffer === "function"
      ? uncurryGetter<number>(SharedArrayBuffer.prototype, "byteLength")
      : undefined;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object;
  const typedArrayTagGetter = getterOf(TypedArrayPrototype, SymbolToStringTag);
  const typedArrayTag = uncurry(typedArrayTagGetter as () => string | undefined);
  const typedArrayLength = uncurryGetter<number>(TypedArrayPrototype, "length")!;
  const dataViewByteLength = uncurryGetter<number>(DataView.prototype, "byteLength")!;
  const dataViewByteOffset = uncurryGetter<number>(DataView.prototype, "byteOffset")!;
  const dataViewBuffer = uncurryGetter<ArrayBuffer>(DataView.prototype, "buffer")!;

  const AsyncFunctionPrototype = getPrototypeOf(async () => {});
  const GeneratorFunctionPrototype = getPrototypeOf(function* () {});
  const AsyncGeneratorFunctionPrototype = getPrototypeOf(async function* () {});

  // The captures stay in this function's scope; the object that hands them to the factories is
  // made on first use (a property per entry costs time in a fresh context, and most runs never
  // build the part).
  return () => ({
    __proto__: null,
    StringCtor,
    Uint8ArrayCtor,
    FunctionPrototype,
    stringRepeat,
    getOwnDescriptor,
    regExpFlagGetters,
    isArray,
    AsyncGeneratorFunctionPrototype,
    mathSqrt,
    symbolToString,
    dataViewBuffer,
    GeneratorFunctionPrototype,
    parseIntFn,
    setHas,
    regExpSource,
    setIteratorPrototype,
    NAN,
    mathRound,
    jsonStringify,
    numberIsFinite,
    SymbolToStringTag,
    AsyncFunctionPrototype,
    mathMin,
    PromisePrototype,
    NumberCtor,
    parseFloatFn,
    weakSetHas,
    mapSize,
    stringIndexOf,
    getPrototypeOf,
    setIteratorNext,
    stringValueOf,
    booleanValueOf,
    ownKeysOf,
    stringSlice,
    weakMapHas,
    stringStartsWith,
    create,
    MapCtor,
    nativeIsError,
    mathMax,
    padEnd,
    ObjectPrototype,
    sharedArrayBufferByteLength,
    ErrorPrototype,
    charCodeAt,
    mathFloor,
    setValues,
    bigintValueOf,
    errorStackGetterOf,
    setSize,
    dataViewByteOffset,
    arrayBufferByteLength,
    mapSet,
    typedArrayTagGetter,
    hasOwn,
    padStart,
    objectIs,
    SetCtor,
    numberToString,
    stringIncludes,
    numberIsNaN,
    regExpFlagLetters,
    SymbolIterator,
    typedArrayLength,
    functionToString,
    mapIteratorPrototype,
    dateToISOString,
    stringEndsWith,
    codePointAt,
    mapIteratorNext,
    typedArrayTag,
    mapEntries,
    setDelete,
    dataViewByteLength,
    numberValueOf,
    setAdd,
    ReflectApply,
    dateGetTime,
    arrayValues,
    symbolValueOf,
    mapGet,
  });
}

export type Intrinsics = ReturnType<ReturnType<typeof captureIntrinsics>>;
