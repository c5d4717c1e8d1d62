import type { Bases } from "./bases.js";
import type { Intrinsics } from "./intrinsics.js";
import type { Layout } from "./layout.js";
import {
  type Boxed,
  type Ctx,
  type Entry,
  kArrayExtrasType,
  kArrayType,
  kObjectType,
  type List,
  MAX_ARRAY_LENGTH,
  MAX_PROTOTYPE_CHAIN,
  PLACEHOLDER,
} from "./shared.js";
import type { Text } from "./text.js";
import type { Values } from "./values.js";

/**
 * GUEST REALM. `formatValue`: the recursive walk over objects, arrays, maps, sets, typed arrays
 * and the rest, with `<ref *1>`/`[Circular *1]` and the output budget.
 */
export function makeFormatter(I: Intrinsics, V: Values, T: Text, B: Bases, L: Layout) {
  const {
    FunctionPrototype,
    MapCtor,
    ObjectPrototype,
    PromisePrototype,
    Uint8ArrayCtor,
    arrayBufferByteLength,
    create,
    dataViewBuffer,
    dataViewByteLength,
    dataViewByteOffset,
    dateGetTime,
    dateToISOString,
    getOwnDescriptor,
    getPrototypeOf,
    isArray,
    mapEntries,
    mapGet,
    mapIteratorNext,
    mapIteratorPrototype,
    mapSet,
    mapSize,
    mathMin,
    numberIsNaN,
    ownKeysOf,
    regExpFlagGetters,
    regExpFlagLetters,
    regExpSource,
    setIteratorNext,
    setIteratorPrototype,
    setSize,
    setValues,
    sharedArrayBufferByteLength,
    stringSlice,
    symbolToString,
    typedArrayLength,
    typedArrayTag,
  } = I;
  const {
    arrayLengthOf,
    chainIncludes,
    dataDesc,
    entry,
    findDesc,
    getCtxStyle,
    getKeys,
    getPrefix,
    getTag,
    hex,
    internalConstructorName,
    isArgumentsObject,
    isArrayBuffer,
    isDataDesc,
    isDataView,
    isDate,
    isError,
    isIndexKey,
    isMap,
    isRegExp,
    isSet,
    isSharedArrayBuffer,
    isTypedArray,
    isWeakMap,
    isWeakSet,
    listIncludes,
    newList,
    primitiveText,
    push,
    readData,
    removeKey,
    unbox,
    unshiftKey,
  } = V;
  const { escapeText, formatBigInt, formatNumber, formatPrimitive, isIdentifierKey, quoteString } = T;
  const { formatError, getFunctionBase } = B;
  const { reduceToSingleString } = L;

  // ---- names -------------------------------------------------------------
  const newCtx = (depth: number, maxChars: number): Ctx => {
    const ctx = create(null) as Ctx;
    ctx.depth = depth;
    ctx.written = 0;
    ctx.maxChars = maxChars;
    ctx.indentationLvl = 0;
    ctx.currentDepth = 0;
    ctx.seen = newList();
    ctx.circular = undefined;
    ctx.budget = newList();
    return ctx;
  };

  const getConstructorName = (value: object, ctx: Ctx, recurseTimes: number): string | null => {
    let firstProto: object | null | undefined;
    let current: object | null = value;
    for (let steps = 0; current !== null && steps < MAX_PROTOTYPE_CHAIN; steps++) {
      if ((current === ObjectPrototype || current === FunctionPrototype) && current !== value) {
        return current === ObjectPrototype ? "Object" : "Function";
      }
      const desc = getOwnDescriptor(current, "constructor");
      if (desc !== undefined && isDataDesc(desc) && typeof desc.value === "function") {
        const ctorFn = desc.value as object;
        const nameDesc = findDesc(ctorFn, "name");
        const name = nameDesc !== undefined && isDataDesc(nameDesc) ? primitiveText(nameDesc.value) : "";
        const prototype = readData(ctorFn, "prototype");
        if (
          name !== "" &&
          name !== undefined &&
          prototype !== null &&
          typeof prototype === "object" &&
          chainIncludes(value, prototype)
        ) {
          return name;
        }
      }
      current = getPrototypeOf(current);
      if (firstProto === undefined) firstProto = current;
    }
    if (firstProto === null || firstProto === undefined) return null;
    const res = internalConstructorName(value);
    if (recurseTimes > ctx.depth) return `${res} <Complex prototype>`;
    const protoConstructor = getConstructorName(firstProto, ctx, recurseTimes + 1);
    if (protoConstructor === null) {
      const inner = newCtx(-1, ctx.maxChars);
      inner.seen = ctx.seen;
      inner.indentationLvl = ctx.indentationLvl;
      return `${res} <${formatValue(inner, firstProto, 0)}>`;
    }
    return `${res} <${protoConstructor}>`;
  };

  // ---- collections -------------------------------------------------------
  const remainingText = (remaining: number): string =>
    `... ${remaining} more item${remaining > 1 ? "s" : ""}`;
  /** One entry's text, counted against the character budget. */
  const counted = (ctx: Ctx, text: string): string => {
    ctx.written += text.length + 4; // with the separator and indentation a line adds
    return text;
  };

  const formatProperty = (
    ctx: Ctx,
    recurseTimes: number,
    key: string | symbol,
    desc: PropertyDescriptor,
    type: number,
  ): string => {
    let text: string;
    if (isDataDesc(desc)) {
      if (desc.value !== undefined) {
        ctx.indentationLvl += 2;
        text = formatValue(ctx, desc.value, recurseTimes);
        ctx.indentationLvl -= 2;
      } else {
        text = "undefined";
      }
    } else if (desc.get !== undefined) {
      text = desc.set !== undefined ? "[Getter/Setter]" : "[Getter]";
    } else if (desc.set !== undefined) {
      text = "[Setter]";
    } else {
      text = "undefined";
    }
    if (type === kArrayType) return text;
    let name: string;
    if (typeof key === "symbol") name = `[${escapeText(symbolToString(key), 39)}]`;
    else if (key === "__proto__") name = "['__proto__']";
    else if (desc.enumerable === false) name = `[${escapeText(key, 39)}]`;
    else if (isIdentifierKey(key)) name = key;
    else name = quoteString(key);
    return `${name}: ${text}`;
  };

  const formatSpecialArray = (
    ctx: Ctx,
    value: object,
    recurseTimes: number,
    maxLength: number,
    output: List<string>,
    start: number,
    arrayLength: number,
  ): List<string> => {
    const keys = ownKeysOf(value);
    let index = start;
    for (let i = start; i < keys.length && output.length < maxLength; i++) {
      const key = keys[i]!;
      if (typeof key !== "string") break;
      const desc = getOwnDescriptor(value, key);
      if (desc === undefined || desc.enumerable !== true) continue;
      const numeric = +key;
      if (numeric > 2 ** 32 - 2) break;
      if (`${index}` !== key) {
        if (!isIndexKey(key)) break;
        const emptyItems = numeric - index;
        push(output, `<${emptyItems} empty item${emptyItems > 1 ? "s" : ""}>`);
        index = numeric;
        if (output.length === maxLength) break;
      }
      push(output, formatProperty(ctx, recurseTimes, key, desc, kArrayType));
      index++;
    }
    const remaining = arrayLength - index;
    if (output.length !== maxLength) {
      if (remaining > 0) push(output, `<${remaining} empty item${remaining > 1 ? "s" : ""}>`);
    } else if (remaining > 0) {
      push(output, remainingText(remaining));
    }
    return output;
  };

  const formatArray = (ctx: Ctx, value: object, recurseTimes: number): List<string> => {
    const valueLength = arrayLengthOf(value);
    const len = mathMin(MAX_ARRAY_LENGTH, valueLength);
    const output: List<string> = newList();
    for (let i = 0; i < len; i++) {
      if (ctx.written > ctx.maxChars) {
        push(output, remainingText(valueLength - i));
        return output;
      }
      const desc = getOwnDescriptor(value, `${i}`);
      if (desc === undefined)
        return formatSpecialArray(ctx, value, recurseTimes, len, output, i, valueLength);
      push(output, counted(ctx, formatProperty(ctx, recurseTimes, "", desc, kArrayType)));
    }
    if (valueLength - len > 0) push(output, remainingText(valueLength - len));
    return output;
  };

  const formatTypedArray = (value: object, length: number): List<string> => {
    const maxLength = mathMin(MAX_ARRAY_LENGTH, length);
    const output: List<string> = newList();
    const elements = value as unknown as List<number | bigint>;
    for (let i = 0; i < maxLength; i++) {
      const element = elements[i];
      push(output, typeof element === "bigint" ? formatBigInt(element) : formatNumber(element as number));
    }
    if (length - maxLength > 0) push(output, remainingText(length - maxLength));
    return output;
  };

  const formatArrayBuffer = (value: object, byteLength: number): List<string> => {
    const output: List<string> = newList();
    let bytes: Uint8Array;
    try {
      bytes = new Uint8ArrayCtor(value as ArrayBuffer, 0, mathMin(MAX_ARRAY_LENGTH, byteLength));
    } catch {
      push(output, "(detached)");
      return output;
    }
    let text = "";
    const count = typedArrayLength(bytes);
    for (let i = 0; i < count; i++) {
      const byte = bytes[i]!;
      text += `${i === 0 ? "" : " "}${byte < 16 ? "0" : ""}${hex(byte)}`;
    }
    const remaining = byteLength - MAX_ARRAY_LENGTH;
    if (remaining > 0) text += ` ... ${remaining} more byte${remaining > 1 ? "s" : ""}`;
    push(output, `[Uint8Contents]: <${text}>`);
    return output;
  };

  const formatSet = (ctx: Ctx, value: object, recurseTimes: number): List<string> => {
    const length = setSize(value);
    const maxLength = mathMin(MAX_ARRAY_LENGTH, length);
    const output: List<string> = newList();
    ctx.indentationLvl += 2;
    const iterator = setValues(value as Set<unknown>);
    for (let i = 0; i < maxLength; i++) {
      const step = setIteratorNext(iterator);
      if (step.done === true) break;
      push(output, formatValue(ctx, step.value, recurseTimes));
    }
    if (length - maxLength > 0) push(output, remainingText(length - maxLength));
    ctx.indentationLvl -= 2;
    return output;
  };

  const formatMap = (ctx: Ctx, value: object, recurseTimes: number): List<string> => {
    const length = mapSize(value);
    const maxLength = mathMin(MAX_ARRAY_LENGTH, length);
    const output: List<string> = newList();
    ctx.indentationLvl += 2;
    const iterator = mapEntries(value as Map<unknown, unknown>);
    for (let i = 0; i < maxLength; i++) {
      const step = mapIteratorNext(iterator);
      if (step.done === true) break;
      const pair = step.value as unknown as List<unknown>;
      push(
        output,
        `${formatValue(ctx, pair[0], recurseTimes)} => ${formatValue(ctx, pair[1], recurseTimes)}`,
      );
    }
    if (length - maxLength > 0) push(output, remainingText(length - maxLength));
    ctx.indentationLvl -= 2;
    return output;
  };

  const formatBoxed = (
    boxed: Boxed,
    ctx: Ctx,
    keys: List<Entry>,
    ctorName: string | null,
    tag: string,
  ): string => {
    const type = boxed.type;
    if (type === "String") {
      const skip = mathMin((boxed.primitive as string).length, keys.length);
      for (let i = 0; i < skip; i++) removeKey(keys, 0);
    }
    let base = `[${type}`;
    if (type !== ctorName) base += ctorName === null ? " (null prototype)" : ` (${ctorName})`;
    base += `: ${formatPrimitive(boxed.primitive, ctx)}]`;
    if (tag !== "" && tag !== ctorName) base += ` [${tag}]`;
    return base;
  };

  // ---- values ------------------------------------------------------------
  const formatValue = (ctx: Ctx, value: unknown, recurseTimes: number): string => {
    if (typeof value !== "object" && typeof value !== "function") return formatPrimitive(value, ctx);
    if (value === null) return "null";
    const object = value as object;
    try {
      isArray(object);
    } catch {
      return "<Revoked Proxy>";
    }
    if (listIncludes(ctx.seen, object)) {
      let index = 1;
      if (ctx.circular === undefined) {
        ctx.circular = new MapCtor();
        mapSet(ctx.circular, object, index);
      } else {
        const known = mapGet(ctx.circular, object);
        if (known === undefined) {
          index = mapSize(ctx.circular) + 1;
          mapSet(ctx.circular, object, index);
        } else {
          index = known;
        }
      }
      return `[Circular *${index}]`;
    }
    const seenLength = ctx.seen.length;
    const indentationLvl = ctx.indentationLvl;
    try {
      return formatRaw(ctx, object, recurseTimes);
    } catch {
      ctx.seen.length = seenLength;
      ctx.indentationLvl = indentationLvl;
      return PLACEHOLDER;
    }
  };

  const bracePair = (open: string, close: string): List<string> => {
    const list: List<string> = newList();
    push(list, open);
    push(list, close);
    return list;
  };

  const formatRaw = (ctx: Ctx, value: object, initialRecurseTimes: number): string => {
    let recurseTimes = initialRecurseTimes;
    const ctorName = getConstructorName(value, ctx, recurseTimes);
    const tag = getTag(value);
    let base = "";
    let keys: List<Entry>;
    let braces: List<string>;
    let extrasType = kObjectType;
    let typed = false;
    let formatter: (ctx: Ctx, value: object, recurseTimes: number) => List<string> = () => newList();

    if (isArray(value)) {
      const length = arrayLengthOf(value);
      const prefix =
        ctorName !== "Array" || tag !== "" ? getPrefix(ctorName, tag, "Array", `(${length})`) : "";
      keys = getKeys(value, length);
      braces = bracePair(`${prefix}[`, "]");
      if (length === 0 && keys.length === 0) return `${braces[0]}]`;
      extrasType = kArrayExtrasType;
      formatter = formatArray;
    } else if (isSet(value)) {
      const size = setSize(value);
      const prefix = getPrefix(ctorName, tag, "Set", `(${size})`);
      keys = getKeys(value, 0);
      formatter = formatSet;
      if (size === 0 && keys.length === 0) return `${prefix}{}`;
      braces = bracePair(`${prefix}{`, "}");
    } else if (isMap(value)) {
      const size = mapSize(value);
      const prefix = getPrefix(ctorName, tag, "Map", `(${size})`);
      keys = getKeys(value, 0);
      formatter = formatMap;
      if (size === 0 && keys.length === 0) return `${prefix}{}`;
      braces = bracePair(`${prefix}{`, "}");
    } else if (isTypedArray(value)) {
      const size = typedArrayLength(value);
      keys = getKeys(value, size);
      const fallback = ctorName === null ? (typedArrayTag(value) as string) : "";
      const prefix = getPrefix(ctorName, tag, fallback, `(${size})`);
      braces = bracePair(`${prefix}[`, "]");
      if (size === 0 && keys.length === 0) return `${braces[0]}]`;
      formatter = () => formatTypedArray(value, size);
      extrasType = kArrayExtrasType;
      typed = true;
    } else if (chainIncludes(value, mapIteratorPrototype) || chainIncludes(value, setIteratorPrototype)) {
      keys = getKeys(value, 0);
      const type = chainIncludes(value, mapIteratorPrototype) ? "Map" : "Set";
      let label = tag;
      if (label !== `${type} Iterator`) {
        if (label !== "") label += "] [";
        label += `${type} Iterator`;
      }
      braces = bracePair(`[${label}] {`, "}");
      formatter = () => {
        const output: List<string> = newList();
        push(output, "<items unknown>");
        return output;
      };
    } else {
      keys = getKeys(value, 0);
      braces = bracePair("{", "}");
      const boxed = typeof value === "function" || ctorName === "Object" ? undefined : unbox(value);
      if (typeof value === "function") {
        base = getFunctionBase(value, ctorName, tag);
        if (keys.length === 0) return base;
      } else if (ctorName === "Object") {
        if (isArgumentsObject(value)) braces[0] = "[Arguments] {";
        else if (tag !== "") braces[0] = `${getPrefix(ctorName, tag, "Object")}{`;
        if (keys.length === 0) return `${braces[0]}}`;
      } else if (isRegExp(value)) {
        let flags = "";
        for (let i = 0; i < regExpFlagLetters.length; i++) {
          const getter = regExpFlagGetters[i];
          if (getter !== undefined && getter(value) === true) flags += regExpFlagLetters[i];
        }
        base = `/${regExpSource(value)}/${flags}`;
        const prefix = getPrefix(ctorName, tag, "RegExp");
        if (prefix !== "RegExp ") base = `${prefix}${base}`;
        if (keys.length === 0 || recurseTimes > ctx.depth) return base;
      } else if (isDate(value)) {
        base = numberIsNaN(dateGetTime(value)) ? "Invalid Date" : dateToISOString(value);
        const prefix = getPrefix(ctorName, tag, "Date");
        if (prefix !== "Date ") base = `${prefix}${base}`;
        if (keys.length === 0) return base;
      } else if (isError(value)) {
        base = formatError(value, ctorName, tag, ctx, keys);
        if (keys.length === 0) return base;
      } else if (isArrayBuffer(value) || isSharedArrayBuffer(value)) {
        const shared = !isArrayBuffer(value);
        const byteLength = shared ? sharedArrayBufferByteLength!(value) : arrayBufferByteLength(value);
        const prefix = getPrefix(ctorName, tag, shared ? "SharedArrayBuffer" : "ArrayBuffer");
        formatter = () => formatArrayBuffer(value, byteLength);
        braces[0] = `${prefix}{`;
        unshiftKey(keys, entry("byteLength", dataDesc(byteLength, true)));
      } else if (isDataView(value)) {
        braces[0] = `${getPrefix(ctorName, tag, "DataView")}{`;
        unshiftKey(keys, entry("buffer", dataDesc(dataViewBuffer(value), true)));
        unshiftKey(keys, entry("byteOffset", dataDesc(dataViewByteOffset(value), true)));
        unshiftKey(keys, entry("byteLength", dataDesc(dataViewByteLength(value), true)));
      } else if (chainIncludes(value, PromisePrototype)) {
        braces[0] = `${getPrefix(ctorName, tag, "Promise")}{`;
        formatter = () => {
          const output: List<string> = newList();
          push(output, "<unknown>");
          return output;
        };
      } else if (isWeakSet(value)) {
        braces[0] = `${getPrefix(ctorName, tag, "WeakSet")}{`;
        formatter = () => {
          const output: List<string> = newList();
          push(output, "<items unknown>");
          return output;
        };
      } else if (isWeakMap(value)) {
        braces[0] = `${getPrefix(ctorName, tag, "WeakMap")}{`;
        formatter = () => {
          const output: List<string> = newList();
          push(output, "<items unknown>");
          return output;
        };
      } else if (ctorName === null && tag === "Module") {
        braces[0] = `${getPrefix(ctorName, "", "Module")}{`;
      } else if (boxed !== undefined) {
        base = formatBoxed(boxed, ctx, keys, ctorName, tag);
        if (keys.length === 0) return base;
      } else {
        if (keys.length === 0) return `${getCtxStyle(value, ctorName, tag)}{}`;
        braces[0] = `${getCtxStyle(value, ctorName, tag)}{`;
      }
    }

    if (recurseTimes > ctx.depth) {
      let name = stringSlice(getCtxStyle(value, ctorName, tag), 0, -1);
      if (ctorName !== null) name = `[${name}]`;
      return name;
    }
    recurseTimes += 1;
    push(ctx.seen, value);
    ctx.currentDepth = recurseTimes;
    const output = formatter(ctx, value, recurseTimes);
    for (let i = 0; i < keys.length; i++) {
      if (ctx.written > ctx.maxChars) {
        const more = keys.length - i;
        push(output, `... ${more} more propert${more > 1 ? "ies" : "y"}`);
        break;
      }
      const item = keys[i]!;
      push(output, counted(ctx, formatProperty(ctx, recurseTimes, item.key, item.desc, extrasType)));
    }
    if (ctx.circular !== undefined) {
      const index = mapGet(ctx.circular, value);
      if (index !== undefined) {
        const reference = `<ref *${index}>`;
        base = base === "" ? reference : `${reference} ${base}`;
      }
    }
    ctx.seen.length -= 1;
    const result = reduceToSingleString(ctx, output, base, braces, extrasType, recurseTimes, value, typed);
    const newLength = (ctx.budget[ctx.indentationLvl] ?? 0) + result.length;
    ctx.budget[ctx.indentationLvl] = newLength;
    if (newLength > 2 ** 27) ctx.depth = -1;
    return result;
  };

  /** `maxChars`: past about this many characters, objects and arrays stop listing entries. */
  const inspectWithDepth = (value: unknown, depth: number, maxChars = Infinity): string => {
    try {
      return formatValue(newCtx(depth, maxChars), value, 0);
    } catch {
      return PLACEHOLDER;
    }
  };

  return { __proto__: null, inspectWithDepth };
}

export type Formatter = ReturnType<typeof makeFormatter>;
