import type { Intrinsics } from "./intrinsics.js";
import {
  type Boxed,
  type Entry,
  type List,
  MAX_KEYED_ELEMENTS,
  MAX_PROTOTYPE_CHAIN,
  type Uncurried,
} from "./shared.js";

/**
 * GUEST REALM. What a value is, read without running its code: small list helpers, descriptors
 * along the prototype chain, brand checks through intrinsics, boxed primitives, own keys, and the
 * constructor-name/tag prefixes.
 */
export function makeValues(I: Intrinsics) {
  const {
    ErrorPrototype,
    NumberCtor,
    ObjectPrototype,
    StringCtor,
    SymbolIterator,
    SymbolToStringTag,
    arrayBufferByteLength,
    arrayValues,
    bigintValueOf,
    booleanValueOf,
    charCodeAt,
    create,
    dataViewByteLength,
    dateGetTime,
    getOwnDescriptor,
    getPrototypeOf,
    hasOwn,
    mapSize,
    nativeIsError,
    numberToString,
    numberValueOf,
    ownKeysOf,
    regExpFlagGetters,
    setSize,
    sharedArrayBufferByteLength,
    stringValueOf,
    symbolValueOf,
    typedArrayTag,
    typedArrayTagGetter,
    weakMapHas,
    weakSetHas,
  } = I;

  // ---- small helpers (no method is ever looked up on a value) ------------
  const newList = <T>(): List<T> => {
    const list = create(null) as List<T>;
    list.length = 0;
    return list;
  };
  const push = <T>(list: List<T>, value: T): void => {
    list[list.length] = value;
    list.length += 1;
  };
  const join = (list: List<string>, separator: string): string => {
    let text = "";
    if (list.length !== 0) {
      const last = list.length - 1;
      for (let i = 0; i < last; i++) {
        text += list[i];
        text += separator;
      }
      text += list[last];
    }
    return text;
  };
  const listIncludes = <T>(list: List<T>, value: T): boolean => {
    for (let i = 0; i < list.length; i++) if (list[i] === value) return true;
    return false;
  };
  const isDataDesc = (desc: PropertyDescriptor): boolean => hasOwn(desc, "value");
  const succeeds = (fn: (value: object) => unknown, value: object): boolean => {
    try {
      fn(value);
      return true;
    } catch {
      return false;
    }
  };
  /** `proto` is somewhere in the prototype chain of `value` (OrdinaryHasInstance). */
  const chainIncludes = (value: object, proto: unknown): boolean => {
    let current = getPrototypeOf(value);
    for (let steps = 0; current !== null && steps < MAX_PROTOTYPE_CHAIN; steps++) {
      if (current === proto) return true;
      current = getPrototypeOf(current);
    }
    return false;
  };
  /** The descriptor of `key` on `value` or the nearest prototype that has it. */
  const findDesc = (value: object, key: string | symbol): PropertyDescriptor | undefined => {
    let current: object | null = value;
    for (let steps = 0; current !== null && steps < MAX_PROTOTYPE_CHAIN; steps++) {
      const desc = getOwnDescriptor(current, key);
      if (desc !== undefined) return desc;
      current = getPrototypeOf(current);
    }
    return undefined;
  };
  /** A data property found along the prototype chain; `undefined` when missing or an accessor. */
  const readData = (value: object, key: string | symbol): unknown => {
    const desc = findDesc(value, key);
    return desc !== undefined && isDataDesc(desc) ? desc.value : undefined;
  };
  const hasProperty = (value: object, key: string | symbol): boolean => findDesc(value, key) !== undefined;
  /** `String(value)` for primitives; `undefined` for objects (whose conversion would run guest code). */
  const primitiveText = (value: unknown): string | undefined =>
    value !== null && (typeof value === "object" || typeof value === "function")
      ? undefined
      : StringCtor(value);
  const hex = (code: number): string => numberToString(code, 16);

  // ---- brand checks (intrinsic calls that throw on other objects) ---------
  const isMap = (value: object): boolean => succeeds(mapSize, value);
  const isSet = (value: object): boolean => succeeds(setSize, value);
  const isTypedArray = (value: object): boolean => typedArrayTag(value) !== undefined;
  const isDate = (value: object): boolean => succeeds(dateGetTime, value);
  const isRegExp = (value: object): boolean => {
    try {
      return regExpFlagGetters[1]!(value) !== undefined;
    } catch {
      return false;
    }
  };
  const isArrayBuffer = (value: object): boolean => succeeds(arrayBufferByteLength, value);
  const isSharedArrayBuffer = (value: object): boolean =>
    sharedArrayBufferByteLength !== undefined && succeeds(sharedArrayBufferByteLength, value);
  const isDataView = (value: object): boolean => succeeds(dataViewByteLength, value);
  const isWeakMap = (value: object): boolean => succeeds((v) => weakMapHas(v, ObjectPrototype), value);
  const isWeakSet = (value: object): boolean => succeeds((v) => weakSetHas(v, ObjectPrototype), value);
  const isError = (value: object): boolean =>
    nativeIsError?.(value) === true || chainIncludes(value, ErrorPrototype);
  const isArgumentsObject = (value: object): boolean => {
    const iterator = getOwnDescriptor(value, SymbolIterator);
    const length = getOwnDescriptor(value, "length");
    return (
      iterator !== undefined &&
      isDataDesc(iterator) &&
      iterator.value === arrayValues &&
      length !== undefined &&
      length.enumerable === false &&
      getOwnDescriptor(value, "callee") !== undefined
    );
  };
  /** The primitive inside a boxed primitive, with its type; `undefined` when `value` is not one. */
  const boxedTypes = ["Number", "String", "Boolean", "BigInt", "Symbol"];
  const boxedValueOf: List<Uncurried<[], unknown>> = newList();
  push(boxedValueOf, numberValueOf);
  push(boxedValueOf, stringValueOf);
  push(boxedValueOf, booleanValueOf);
  push(boxedValueOf, bigintValueOf);
  push(boxedValueOf, symbolValueOf);
  const unbox = (value: object): Boxed | undefined => {
    for (let i = 0; i < boxedValueOf.length; i++) {
      try {
        const primitive = boxedValueOf[i]!(value);
        const result = create(null) as Boxed;
        result.primitive = primitive;
        result.type = boxedTypes[i]!;
        return result;
      } catch {
        // not this kind
      }
    }
    return undefined;
  };

  /** A canonical array index (`0`, `1`, … below 2 ** 32 - 1). */
  const isIndexKey = (key: string | symbol): boolean => {
    if (typeof key !== "string" || key.length === 0 || key.length > 10) return false;
    if (key === "0") return true;
    const first = charCodeAt(key, 0);
    if (first < 49 || first > 57) return false;
    for (let i = 1; i < key.length; i++) {
      const code = charCodeAt(key, i);
      if (code < 48 || code > 57) return false;
    }
    return NumberCtor(key) < 4294967295;
  };

  // ---- names, prefixes ---------------------------------------------------
  const internalConstructorName = (value: object): string =>
    typeof value === "function" ? "Function" : "Object";

  /** `value[Symbol.toStringTag]` when it is a string data property that is not an own enumerable one. */
  const getTag = (value: object): string => {
    let current: object | null = value;
    for (let steps = 0; current !== null && steps < MAX_PROTOTYPE_CHAIN; steps++) {
      const desc = getOwnDescriptor(current, SymbolToStringTag);
      if (desc !== undefined) {
        let tag: unknown;
        if (isDataDesc(desc)) tag = desc.value;
        else if (desc.get === typedArrayTagGetter) tag = typedArrayTag(value);
        else return "";
        if (typeof tag !== "string") return "";
        if (tag !== "" && current === value && desc.enumerable === true) return "";
        return tag;
      }
      current = getPrototypeOf(current);
    }
    return "";
  };

  const getPrefix = (ctorName: string | null, tag: string, fallback: string, size = ""): string => {
    if (ctorName === null) {
      if (tag !== "" && fallback !== tag) return `[${fallback}${size}: null prototype] [${tag}] `;
      return `[${fallback}${size}: null prototype] `;
    }
    if (tag !== "" && ctorName !== tag) return `${ctorName}${size} [${tag}] `;
    return `${ctorName}${size} `;
  };

  const getCtxStyle = (value: object, ctorName: string | null, tag: string): string => {
    let fallback = "";
    if (ctorName === null) {
      fallback = internalConstructorName(value);
      if (fallback === tag) fallback = "Object";
    }
    return getPrefix(ctorName, tag, fallback);
  };

  // ---- keys --------------------------------------------------------------
  const entry = (key: string | symbol, desc: PropertyDescriptor): Entry => {
    const result = create(null) as Entry;
    result.key = key;
    result.desc = desc;
    return result;
  };
  const dataDesc = (value: unknown, enumerable: boolean): PropertyDescriptor => {
    const desc = create(null) as PropertyDescriptor;
    desc.value = value;
    desc.enumerable = enumerable;
    return desc;
  };
  /**
   * Own enumerable keys (strings, then symbols) with their descriptors. `elements` is the length of
   * an array or typed array, whose index keys are skipped; above MAX_KEYED_ELEMENTS such a value's
   * other keys are not looked for (`Reflect.ownKeys` would list every index).
   */
  const getKeys = (value: object, elements: number): List<Entry> => {
    const result: List<Entry> = newList();
    if (elements > MAX_KEYED_ELEMENTS) return result;
    const keys = ownKeysOf(value);
    let start = 0;
    if (elements > 0) {
      // Array indices come first, in ascending order: find where they end.
      let high = keys.length;
      while (start < high) {
        const middle = (start + high) >>> 1;
        if (isIndexKey(keys[middle]!)) start = middle + 1;
        else high = middle;
      }
    }
    for (let i = start; i < keys.length; i++) {
      const key = keys[i]!;
      const desc = getOwnDescriptor(value, key);
      if (desc !== undefined && desc.enumerable === true) push(result, entry(key, desc));
    }
    return result;
  };
  const findKey = (keys: List<Entry>, key: string): number => {
    for (let i = 0; i < keys.length; i++) if (keys[i]!.key === key) return i;
    return -1;
  };
  const removeKey = (keys: List<Entry>, index: number): void => {
    for (let i = index; i < keys.length - 1; i++) keys[i] = keys[i + 1]!;
    keys.length -= 1;
    delete keys[keys.length];
  };
  const unshiftKey = (keys: List<Entry>, item: Entry): void => {
    for (let i = keys.length; i > 0; i--) keys[i] = keys[i - 1]!;
    keys[0] = item;
    keys.length += 1;
  };
  /** The descriptor Node would use for `key`: the own one, else an inherited data value. */
  const propertyDesc = (value: object, key: string): PropertyDescriptor => {
    const own = getOwnDescriptor(value, key);
    if (own !== undefined) return own;
    let current = getPrototypeOf(value);
    for (let steps = 0; current !== null && steps < MAX_PROTOTYPE_CHAIN; steps++) {
      const desc = getOwnDescriptor(current, key);
      if (desc !== undefined) return isDataDesc(desc) ? dataDesc(desc.value, true) : desc;
      current = getPrototypeOf(current);
    }
    return dataDesc(undefined, true);
  };

  const arrayLengthOf = (value: object): number => {
    const desc = getOwnDescriptor(value, "length");
    return desc !== undefined && isDataDesc(desc) && typeof desc.value === "number" ? desc.value : 0;
  };

  return {
    __proto__: null,
    join,
    propertyDesc,
    isIndexKey,
    isWeakSet,
    isError,
    isArgumentsObject,
    entry,
    isMap,
    unshiftKey,
    getPrefix,
    removeKey,
    readData,
    primitiveText,
    getTag,
    isSharedArrayBuffer,
    hasProperty,
    internalConstructorName,
    dataDesc,
    listIncludes,
    isWeakMap,
    isDataView,
    isSet,
    isArrayBuffer,
    findKey,
    chainIncludes,
    arrayLengthOf,
    isRegExp,
    newList,
    isDate,
    getCtxStyle,
    unbox,
    getKeys,
    hex,
    isDataDesc,
    findDesc,
    isTypedArray,
    push,
  };
}

export type Values = ReturnType<typeof makeValues>;
