import type { Formatter } from "./formatter.js";
import type { Intrinsics } from "./intrinsics.js";
import { DEFAULT_DEPTH, type JsonFrame, type List, PLACEHOLDER } from "./shared.js";
import type { Text } from "./text.js";
import type { Values } from "./values.js";

/**
 * GUEST REALM. `util.format`: `%s %d %i %f %j %o %O %c %%`, the JSON writer behind `%j`, and the
 * two entries the part installs.
 */
export function makeFormat(I: Intrinsics, V: Values, T: Text, F: Formatter) {
  const {
    NAN,
    NumberCtor,
    SetCtor,
    StringCtor,
    charCodeAt,
    create,
    dateGetTime,
    dateToISOString,
    functionToString,
    getOwnDescriptor,
    isArray,
    jsonStringify,
    numberIsFinite,
    numberIsNaN,
    parseFloatFn,
    parseIntFn,
    setAdd,
    setDelete,
    setHas,
    stringSlice,
  } = I;
  const { arrayLengthOf, getKeys, isDataDesc, isDate, newList, push, unbox } = V;
  const { formatBigInt, formatNumber } = T;
  const { inspectWithDepth } = F;

  // ---- %j ----------------------------------------------------------------
  const BIGINT_IN_JSON = create(null) as object;
  const CIRCULAR_IN_JSON = create(null) as object;
  /** A value as JSON text, `undefined` (left out), or the object to descend into. */
  const jsonLeaf = (value: unknown): string | undefined | object => {
    if (typeof value === "string") return jsonStringify(value);
    if (typeof value === "number") return numberIsFinite(value) ? `${value}` : "null";
    if (typeof value === "boolean") return value ? "true" : "false";
    if (typeof value === "bigint") throw BIGINT_IN_JSON;
    if (value === null) return "null";
    if (typeof value !== "object") return undefined;
    if (isDate(value))
      return numberIsNaN(dateGetTime(value)) ? "null" : jsonStringify(dateToISOString(value));
    const boxed = isArray(value) ? undefined : unbox(value);
    if (boxed !== undefined && boxed.type !== "Symbol") return jsonLeaf(boxed.primitive);
    return value;
  };
  const toJson = (root: unknown): string | undefined => {
    const first = jsonLeaf(root);
    if (typeof first !== "object") return first;
    const active = new SetCtor<object>();
    const frames: List<JsonFrame> = newList();
    const open = (object: object, prefix: string): void => {
      if (setHas(active, object)) throw CIRCULAR_IN_JSON;
      setAdd(active, object);
      const frame = create(null) as JsonFrame;
      frame.object = object;
      frame.isArray = isArray(object);
      frame.keys = frame.isArray ? newList() : getKeys(object, 0);
      frame.count = frame.isArray ? arrayLengthOf(object) : frame.keys.length;
      frame.index = 0;
      frame.text = "";
      frame.items = 0;
      frame.prefix = prefix;
      push(frames, frame);
    };
    const add = (frame: JsonFrame, text: string): void => {
      frame.text = frame.items === 0 ? text : `${frame.text},${text}`;
      frame.items += 1;
    };
    open(first, "");
    for (;;) {
      const frame = frames[frames.length - 1]!;
      if (frame.index >= frame.count) {
        const text = frame.isArray ? `[${frame.text}]` : `{${frame.text}}`;
        setDelete(active, frame.object);
        frames.length -= 1;
        delete frames[frames.length];
        if (frames.length === 0) return text;
        add(frames[frames.length - 1]!, `${frame.prefix}${text}`);
        continue;
      }
      const index = frame.index++;
      if (frame.isArray) {
        const desc = getOwnDescriptor(frame.object, `${index}`);
        const leaf = jsonLeaf(desc !== undefined && isDataDesc(desc) ? desc.value : undefined);
        if (typeof leaf === "object") open(leaf, "");
        else add(frame, leaf === undefined ? "null" : leaf);
      } else {
        const item = frame.keys[index]!;
        if (typeof item.key !== "string" || !isDataDesc(item.desc)) continue;
        const leaf = jsonLeaf(item.desc.value);
        const prefix = `${jsonStringify(item.key)}:`;
        if (typeof leaf === "object") open(leaf, prefix);
        else if (leaf !== undefined) add(frame, `${prefix}${leaf}`);
      }
    }
  };
  const formatJson = (value: unknown): string => {
    try {
      const text = toJson(value);
      return text === undefined ? "undefined" : text;
    } catch (error) {
      return error === CIRCULAR_IN_JSON ? "[Circular]" : PLACEHOLDER;
    }
  };

  // ---- %d %i %f ----------------------------------------------------------
  /** The text `ToString` would give for an array's first element chain, without running guest code. */
  const arrayText = (array: object): string => {
    let suffix = "";
    let current: unknown = array;
    for (let depth = 0; depth < 1000; depth++) {
      if (current === null || current === undefined) return suffix;
      if (typeof current !== "object" && typeof current !== "function") {
        return typeof current === "symbol" ? `NaN${suffix}` : `${StringCtor(current)}${suffix}`;
      }
      const object = current as object;
      if (isArray(object)) {
        const length = arrayLengthOf(object);
        if (length === 0) return suffix;
        if (length > 1) suffix = `,${suffix}`;
        const desc = getOwnDescriptor(object, "0");
        current = desc !== undefined && isDataDesc(desc) ? desc.value : undefined;
        continue;
      }
      const boxed = unbox(object);
      if (boxed !== undefined && boxed.type !== "Symbol") {
        current = boxed.primitive;
        continue;
      }
      return `[object]${suffix}`;
    }
    return `NaN${suffix}`;
  };
  /** Number(value), parseInt or parseFloat of `value`, converting objects without calling their methods. */
  const toNumeric = (value: unknown, kind: number): number => {
    let input: unknown = value;
    if (value !== null && (typeof value === "object" || typeof value === "function")) {
      const object = value as object;
      if (typeof value === "function") input = NAN;
      else if (isArray(object)) input = arrayText(object);
      else if (isDate(object)) input = kind === 0 ? dateGetTime(object) : NAN;
      else {
        const boxed = unbox(object);
        input = boxed !== undefined && boxed.type !== "Symbol" ? boxed.primitive : NAN;
      }
    }
    if (kind === 0 || typeof input === "bigint") return NumberCtor(input);
    return kind === 1 ? parseIntFn(StringCtor(input)) : parseFloatFn(StringCtor(input));
  };

  // ---- format ------------------------------------------------------------
  /**
   * `util.format` with `%O` and the trailing values inspected to `depth`. Past about `maxChars`
   * characters objects stop listing entries, and a string that would pass it is cut with `…`:
   * a bound on the text, not an exact length (the caller cuts the rest).
   */
  const formatWithOptions = (args: List<unknown>, depth: number, maxChars: number): string => {
    const first = args[0];
    let a = 0;
    let text = "";
    let separator = "";
    if (typeof first === "string") {
      if (args.length === 1) return first.length > maxChars ? `${stringSlice(first, 0, maxChars)}…` : first;
      let lastPos = 0;
      let piece = "";
      for (let i = 0; i < first.length - 1; i++) {
        if (charCodeAt(first, i) !== 37) continue;
        const nextChar = charCodeAt(first, ++i);
        if (a + 1 !== args.length) {
          switch (nextChar) {
            case 115: {
              // %s
              const arg = args[++a];
              if (typeof arg === "number") piece = formatNumber(arg);
              else if (typeof arg === "bigint") piece = formatBigInt(arg);
              else if (typeof arg === "function") {
                try {
                  piece = functionToString(arg);
                } catch {
                  piece = inspectWithDepth(arg, 0, maxChars - text.length);
                }
              } else if (typeof arg !== "object" || arg === null) piece = StringCtor(arg);
              else piece = inspectWithDepth(arg, 0, maxChars - text.length);
              break;
            }
            case 106: // %j
              piece = formatJson(args[++a]);
              break;
            case 100: {
              // %d
              const arg = args[++a];
              if (typeof arg === "bigint") piece = formatBigInt(arg);
              else if (typeof arg === "symbol") piece = "NaN";
              else piece = formatNumber(toNumeric(arg, 0));
              break;
            }
            case 79: // %O
              piece = inspectWithDepth(args[++a], depth, maxChars - text.length);
              break;
            case 111: // %o
              piece = inspectWithDepth(args[++a], 4, maxChars - text.length);
              break;
            case 105: {
              // %i
              const arg = args[++a];
              if (typeof arg === "bigint") piece = formatBigInt(arg);
              else if (typeof arg === "symbol") piece = "NaN";
              else piece = formatNumber(toNumeric(arg, 1));
              break;
            }
            case 102: {
              // %f
              const arg = args[++a];
              piece = typeof arg === "symbol" ? "NaN" : formatNumber(toNumeric(arg, 2));
              break;
            }
            case 99: // %c
              a += 1;
              piece = "";
              break;
            case 37: // %%
              text += stringSlice(first, lastPos, i);
              lastPos = i + 1;
              continue;
            default:
              continue;
          }
          if (lastPos !== i - 1) text += stringSlice(first, lastPos, i - 1);
          text += piece;
          lastPos = i + 1;
        } else if (nextChar === 37) {
          text += stringSlice(first, lastPos, i);
          lastPos = i + 1;
        }
      }
      if (lastPos !== 0) {
        a++;
        separator = " ";
        if (lastPos < first.length) text += stringSlice(first, lastPos);
      }
    }
    while (a < args.length) {
      if (text.length > maxChars) return `${text}…`;
      const value = args[a];
      text += separator;
      if (typeof value !== "string") text += inspectWithDepth(value, depth, maxChars - text.length);
      else if (text.length + value.length <= maxChars) text += value;
      // Sliced from the argument itself, so a huge string is never joined to the line in full.
      else return `${text}${stringSlice(value, 0, maxChars - text.length)}…`;
      separator = " ";
      a++;
    }
    return text;
  };

  return {
    __proto__: null,
    inspect: (value: unknown): string => inspectWithDepth(value, DEFAULT_DEPTH),
    format: (args: readonly unknown[], depth = DEFAULT_DEPTH, maxChars = Infinity): string => {
      try {
        const copy: List<unknown> = newList();
        const length = arrayLengthOf(args);
        for (let i = 0; i < length; i++) {
          const desc = getOwnDescriptor(args, `${i}`);
          push(copy, desc !== undefined && isDataDesc(desc) ? desc.value : undefined);
        }
        return formatWithOptions(copy, depth, maxChars);
      } catch {
        return PLACEHOLDER;
      }
    },
  };
}
