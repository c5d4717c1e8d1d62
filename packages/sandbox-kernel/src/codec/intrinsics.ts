import type { Descriptor } from "./shared.js";

/**
 * GUEST REALM. Every intrinsic the codec uses, as raw references captured when the codec
 * installs: before any guest code runs in the realm. Binding them and building the tables waits
 * for the first `encode`/`decode` of something other than a primitive, which uses nothing but
 * these captured values, so it is as safe run late as run at install — and an execution that
 * returns a number never pays for it. Nothing else in codec/ reads a global.
 */
export function captureIntrinsics() {
  const ObjectPrototype = Object.prototype;
  const freeze = Object.freeze;
  const objectKeys = Object.keys;
  const hasOwn = Object.hasOwn;
  const setPrototypeOf = Object.setPrototypeOf;
  const createObject = Object.create;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor as (
    o: unknown,
    k: PropertyKey,
  ) => Descriptor;
  const getPrototypeOf = Reflect.getPrototypeOf as (o: unknown) => object | null;
  const apply = Reflect.apply;
  const deleteProperty = Reflect.deleteProperty;
  const isArray = Array.isArray;
  const isView = ArrayBuffer.isView;
  const numberIsFinite = Number.isFinite;
  const numberIsNaN = Number.isNaN;
  const isInteger = Number.isInteger;
  const mathCeil = Math.ceil;
  const mathMin = Math.min;
  const jsonStringify = JSON.stringify as (value: unknown) => string;
  const jsonParse = JSON.parse;
  const BigIntCtor = BigInt;
  const StringCtor = String;
  const asUintN = BigInt.asUintN;
  const fromCharCode = String.fromCharCode;
  const TypeErrorCtor = TypeError;
  const MapCtor = Map;
  const SetCtor = Set;
  const DateCtor = Date;
  const RegExpCtor = RegExp;
  const ArrayBufferCtor = ArrayBuffer;
  const Uint8ArrayCtor = Uint8Array;
  const Int16ArrayCtor = Int16Array;
  const Uint16ArrayCtor = Uint16Array;
  const DataViewCtor = DataView;
  const WeakSetCtor = WeakSet;
  const SharedArrayBufferCtor = typeof SharedArrayBuffer === "function" ? SharedArrayBuffer : undefined;
  const WeakRefCtor = typeof WeakRef === "function" ? WeakRef : undefined;
  const RegistryCtor = typeof FinalizationRegistry === "function" ? FinalizationRegistry : undefined;
  const AggregateErrorCtor = typeof AggregateError === "function" ? AggregateError : undefined;
  const iteratorSymbol = Symbol.iterator;
  const toStringTagSymbol = Symbol.toStringTag;
  const functionBind = Function.prototype.bind;
  const functionCall = Function.prototype.call;
  const getterOf = (proto: object, key: PropertyKey): unknown => getOwnPropertyDescriptor(proto, key)?.get;
  const RegExpPrototype = RegExp.prototype;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object;
  /** The methods and getters the codec calls, by name; each is bound on first use of the codec. */
  // A dictionary-mode object: in a fresh context, every named property of an ordinary object
  // costs a new hidden-class transition (about a microsecond each); a null-prototype object made
  // by `Object.create(null)` takes them as hash entries.
  const raw = createObject(null) as Record<string, unknown>;
  raw.arrayJoin = Array.prototype.join;
  raw.typedSubarray = Uint16Array.prototype.subarray;
  raw.charCodeAt = String.prototype.charCodeAt;
  raw.objectToString = ObjectPrototype.toString;
  raw.mapGet = Map.prototype.get;
  raw.mapSet = Map.prototype.set;
  raw.mapEntries = Map.prototype.entries;
  raw.mapIteratorNext = (getPrototypeOf(new MapCtor().entries()) as { next: unknown }).next;
  raw.mapSize = getterOf(Map.prototype, "size");
  raw.setAdd = Set.prototype.add;
  raw.setValues = Set.prototype.values;
  raw.setIteratorNext = (getPrototypeOf(new SetCtor().values()) as { next: unknown }).next;
  raw.setSize = getterOf(Set.prototype, "size");
  raw.weakSetAdd = WeakSet.prototype.add;
  raw.weakSetHas = WeakSet.prototype.has;
  raw.weakMapHas = WeakMap.prototype.has;
  raw.weakRefDeref = WeakRefCtor === undefined ? undefined : WeakRefCtor.prototype.deref;
  raw.registryUnregister = RegistryCtor === undefined ? undefined : RegistryCtor.prototype.unregister;
  raw.dateGetTime = Date.prototype.getTime;
  raw.regExpExec = RegExpPrototype.exec;
  raw.regExpSource = getterOf(RegExpPrototype, "source");
  raw.hasIndices = getterOf(RegExpPrototype, "hasIndices");
  raw.global = getterOf(RegExpPrototype, "global");
  raw.ignoreCase = getterOf(RegExpPrototype, "ignoreCase");
  raw.multiline = getterOf(RegExpPrototype, "multiline");
  raw.dotAll = getterOf(RegExpPrototype, "dotAll");
  raw.unicode = getterOf(RegExpPrototype, "unicode");
  raw.unicodeSets = getterOf(RegExpPrototype, "unicodeSets");
  raw.sticky = getterOf(RegExpPrototype, "sticky");
  raw.arrayBufferByteLength = getterOf(ArrayBuffer.prototype, "byteLength");
  raw.sharedArrayBufferByteLength =
    SharedArrayBufferCtor === undefined ? undefined : getterOf(SharedArrayBufferCtor.prototype, "byteLength");
  raw.typedArrayTag = getterOf(TypedArrayPrototype, toStringTagSymbol);
  raw.typedArrayBuffer = getterOf(TypedArrayPrototype, "buffer");
  raw.typedArrayByteOffset = getterOf(TypedArrayPrototype, "byteOffset");
  raw.typedArrayByteLength = getterOf(TypedArrayPrototype, "byteLength");
  raw.dataViewBuffer = getterOf(DataView.prototype, "buffer");
  raw.dataViewByteOffset = getterOf(DataView.prototype, "byteOffset");
  raw.dataViewByteLength = getterOf(DataView.prototype, "byteLength");
  raw.numberValueOf = Number.prototype.valueOf;
  raw.stringValueOf = String.prototype.valueOf;
  raw.booleanValueOf = Boolean.prototype.valueOf;
  raw.bigIntValueOf = BigInt.prototype.valueOf;
  raw.symbolValueOf = Symbol.prototype.valueOf;
  // Named directly, not read as `globalThis[name]`: a keyed read of a vm context's global costs
  // a call into node per name, and this runs for every fresh context.
  const typedCtors = [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    (globalThis as { Float16Array?: unknown }).Float16Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  ] as unknown as ((new (buffer: ArrayBuffer) => ArrayBufferView) & { BYTES_PER_ELEMENT: number })[];
  const errorCtors = [
    Error,
    TypeError,
    RangeError,
    SyntaxError,
    ReferenceError,
    EvalError,
    URIError,
    AggregateErrorCtor,
  ] as unknown as ((new (...args: unknown[]) => Error) | undefined)[];
  /** Prototype kinds: a constructor whose prototype names a data kind (a number) or a refusal (a string). */
  const kindCtors = [
    Map,
    Set,
    Date,
    RegExp,
    ArrayBuffer,
    Error,
    Promise,
    WeakMap,
    WeakSet,
    WeakRefCtor,
    RegistryCtor,
    SharedArrayBufferCtor,
    Number,
    String,
    Boolean,
    BigInt,
    Symbol,
  ] as unknown[];

  // The captures stay in this function's scope; the object that hands them to the factories is
  // made on first use (a property per entry costs time in a fresh context, and most runs never
  // build the part).
  return () => ({
    __proto__: null,
    AggregateErrorCtor,
    ArrayBufferCtor,
    BigIntCtor,
    DataViewCtor,
    DateCtor,
    Int16ArrayCtor,
    MapCtor,
    ObjectPrototype,
    RegExpCtor,
    RegExpPrototype,
    SetCtor,
    StringCtor,
    TypeErrorCtor,
    Uint16ArrayCtor,
    Uint8ArrayCtor,
    WeakSetCtor,
    apply,
    asUintN,
    defineProperty,
    deleteProperty,
    errorCtors,
    freeze,
    fromCharCode,
    functionBind,
    functionCall,
    getOwnPropertyDescriptor,
    getPrototypeOf,
    hasOwn,
    isArray,
    isInteger,
    isView,
    iteratorSymbol,
    jsonParse,
    jsonStringify,
    kindCtors,
    mathCeil,
    mathMin,
    numberIsFinite,
    numberIsNaN,
    objectKeys,
    raw,
    setPrototypeOf,
    typedCtors,
  });
}

export type Intrinsics = ReturnType<ReturnType<typeof captureIntrinsics>>;
