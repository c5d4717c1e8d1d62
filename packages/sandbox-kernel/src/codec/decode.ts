import type { Base64 } from "./base64.js";
import type { Intrinsics } from "./intrinsics.js";
import type { Kinds } from "./kinds.js";
import type { Descriptor } from "./shared.js";

/**
 * GUEST REALM. `decode(text)`: codec text rebuilt with this realm's constructors, defining every
 * key (no inherited setter runs); a TypeError naming why for text that is not codec text.
 */
export function makeDecode(I: Intrinsics, K: Kinds, B: Base64) {
  const {
    AggregateErrorCtor,
    ArrayBufferCtor,
    BigIntCtor,
    DataViewCtor,
    DateCtor,
    MapCtor,
    ObjectPrototype,
    RegExpCtor,
    SetCtor,
    TypeErrorCtor,
    Uint8ArrayCtor,
    defineProperty,
    deleteProperty,
    freeze,
    hasOwn,
    isArray,
    isInteger,
    jsonParse,
    setPrototypeOf,
  } = I;
  const {
    DEEP,
    ErrorCtor,
    MAX_DEPTH,
    arrayBufferByteLength,
    charCodeAt,
    emptyIterable,
    errors,
    list,
    mapSet,
    setAdd,
    typedArrays,
  } = K;
  const { base64Values } = B;

  /** One reusable data descriptor (decode runs no foreign code, so it is never seen half-filled). */
  const descriptor = setPrototypeOf(
    { value: undefined, writable: true, enumerable: true, configurable: true },
    null,
  ) as Descriptor;
  const define = (target: object, key: string, value: unknown, enumerable: boolean): void => {
    descriptor.value = value;
    descriptor.enumerable = enumerable;
    defineProperty(target, key, descriptor as PropertyDescriptor);
  };
  let malformedReason = "";
  const MALFORMED = freeze(setPrototypeOf({}, null));
  const bad = (reason: string): never => {
    malformedReason = reason;
    throw MALFORMED;
  };

  const fromBase64 = (text: unknown): ArrayBuffer => {
    if (typeof text !== "string" || text.length % 4 !== 0) return bad("bad base64");
    const length = text.length;
    let padding = 0;
    if (length > 0 && charCodeAt(text, length - 1) === 61)
      padding = charCodeAt(text, length - 2) === 61 ? 2 : 1;
    const size = (length / 4) * 3 - padding;
    const buffer = new ArrayBufferCtor(size);
    const bytes = new Uint8ArrayCtor(buffer);
    let p = 0;
    const values = base64Values();
    for (let i = 0; i < length; i += 4) {
      const last = i + 4 === length;
      const a = values[charCodeAt(text, i)];
      const b = values[charCodeAt(text, i + 1)];
      const c = last && padding === 2 ? 0 : values[charCodeAt(text, i + 2)];
      const d = last && padding > 0 ? 0 : values[charCodeAt(text, i + 3)];
      if (a === undefined || b === undefined || c === undefined || d === undefined || (a | b | c | d) < 0)
        return bad("bad base64");
      const x = (a << 18) | (b << 12) | (c << 6) | d;
      bytes[p++] = x >>> 16;
      if (p < size) bytes[p++] = (x >>> 8) & 255;
      if (p < size) bytes[p++] = x & 255;
    }
    return buffer;
  };

  /** How many elements a node with `tag` has (0: not a tag). */
  const arity = (tag: string): number => {
    switch (tag) {
      case "u":
        return 1;
      case "n":
      case "b":
      case "r":
      case "a":
      case "o":
      case "M":
      case "S":
      case "D":
      case "V":
      case "B":
        return 2;
      case "R":
      case "T":
        return 3;
      case "E":
        return 5;
      default:
        return 0;
    }
  };

  const isDigits = (s: string): boolean => {
    const start = s.length > 0 && charCodeAt(s, 0) === 45 ? 1 : 0;
    if (s.length === start) return false;
    for (let i = start; i < s.length; i++) {
      const c = charCodeAt(s, i);
      if (c < 48 || c > 57) return false;
    }
    return true;
  };

  const decode = (text: string): unknown => {
    if (typeof text !== "string") throw new TypeErrorCtor("decode: codec text must be a string");
    let tree: unknown;
    try {
      tree = jsonParse(text);
    } catch {
      throw new TypeErrorCtor("decode: malformed codec text (not JSON)");
    }
    const refs = list<unknown>();
    const keep = <T>(value: T): T => {
      refs[refs.length] = value;
      return value;
    };
    const pairs = (entries: unknown): unknown[][] => {
      if (!isArray(entries)) return bad("entries are not a list");
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i];
        if (!isArray(entry) || entry.length !== 2) return bad("an entry is not a pair");
      }
      return entries as unknown[][];
    };
    /** A node with no children (the `a`, `o`, `M`, `S` and `E` nodes are built by {@link container}). */
    const leaf = (n: unknown[], tag: string): unknown => {
      switch (tag) {
        case "u":
          return undefined;
        case "n":
          switch (n[1]) {
            case "NaN":
              return NaN;
            case "Infinity":
              return Infinity;
            case "-Infinity":
              return -Infinity;
            case "-0":
              return -0;
            default:
              return bad("bad special number");
          }
        case "b": {
          const digits = n[1];
          if (typeof digits !== "string" || !isDigits(digits)) return bad("bad BigInt");
          return BigIntCtor(digits);
        }
        case "r": {
          const index = n[1];
          if (typeof index !== "number" || !isInteger(index) || index < 0 || index >= refs.length)
            return bad("bad reference");
          return refs[index];
        }
        case "D": {
          const time = n[1];
          if (time !== "NaN" && typeof time !== "number") return bad("bad Date");
          return keep(new DateCtor(time === "NaN" ? NaN : time));
        }
        case "R": {
          const source = n[1];
          const flags = n[2];
          if (typeof source !== "string" || typeof flags !== "string") return bad("bad RegExp");
          let re: RegExp;
          try {
            re = new RegExpCtor(source, flags);
          } catch {
            return bad("bad RegExp");
          }
          return keep(re);
        }
        case "T": {
          const kind = n[1];
          const typed = typeof kind === "string" ? typedArrays()[kind] : undefined;
          if (typed === undefined) return bad("unknown typed array kind");
          const buffer = fromBase64(n[2]);
          if ((arrayBufferByteLength?.(buffer) as number) % typed[1] !== 0)
            return bad("bad typed array length");
          return keep(new typed[0](buffer));
        }
        case "V":
          return keep(new DataViewCtor(fromBase64(n[1])));
        default:
          return keep(fromBase64(n[1]));
      }
    };

    const container = (n: unknown[], tag: string, depth: number): unknown => {
      switch (tag) {
        case "a": {
          // The parsed list becomes the array: its elements are replaced in place, holes deleted.
          const items = n[1];
          if (!isArray(items)) return bad("array items are not a list");
          keep(items);
          for (let i = 0; i < items.length; i++) {
            const item = items[i];
            if (typeof item !== "object" || item === null) continue;
            if (isArray(item) && item.length === 1 && item[0] === "h") deleteProperty(items, i);
            else items[i] = node(item, depth + 1);
          }
          return items;
        }
        case "o": {
          const entries = pairs(n[1]);
          const o = keep({}) as Record<string, unknown>;
          for (let i = 0; i < entries.length; i++) {
            const entry = entries[i] as unknown[];
            const key = entry[0];
            if (typeof key !== "string") return bad("a key is not a string");
            const value = node(entry[1], depth + 1);
            // Assignment is several times faster than defineProperty and is exact unless the key
            // is on Object.prototype (`__proto__`, or a setter or read-only property put there).
            if (hasOwn(ObjectPrototype, key)) define(o, key, value, true);
            else o[key] = value;
          }
          return o;
        }
        case "M": {
          const entries = pairs(n[1]);
          const m = keep(new MapCtor());
          for (let i = 0; i < entries.length; i++) {
            const entry = entries[i] as unknown[];
            const key = node(entry[0], depth + 1);
            mapSet(m, key, node(entry[1], depth + 1));
          }
          return m;
        }
        case "S": {
          const items = n[1];
          if (!isArray(items)) return bad("Set items are not a list");
          const s = keep(new SetCtor());
          for (let i = 0; i < items.length; i++) setAdd(s, node(items[i], depth + 1));
          return s;
        }
        default:
          return error(n, depth);
      }
    };

    const error = (n: unknown[], depth: number): Error => {
      const name = n[1];
      const message = n[2];
      const stack = n[3];
      if (typeof name !== "string" || typeof message !== "string" || typeof stack !== "string")
        return bad("bad Error fields");
      const entries = pairs(n[4]);
      const table = errors();
      const Ctor = table[name] ?? ErrorCtor;
      const aggregate = AggregateErrorCtor !== undefined && Ctor === AggregateErrorCtor;
      const e: Error = aggregate
        ? message === ""
          ? new AggregateErrorCtor(emptyIterable())
          : new AggregateErrorCtor(emptyIterable(), message)
        : message === ""
          ? new Ctor()
          : new Ctor(message);
      keep(e);
      if (table[name] === undefined) define(e, "name", name, false);
      // Deleting first keeps V8 from formatting the captured stack (running prepareStackTrace).
      deleteProperty(e, "stack");
      define(e, "stack", stack, false);
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i] as unknown[];
        const key = entry[0];
        if (typeof key !== "string") return bad("a key is not a string");
        const hidden = key === "cause" || (aggregate && key === "errors");
        define(e, key, node(entry[1], depth + 1), !hidden);
      }
      return e;
    };

    const node = (n: unknown, depth: number): unknown => {
      if (typeof n !== "object") return n;
      if (n === null) return null;
      // Length first: reading a missing index would reach Array.prototype.
      if (!isArray(n) || n.length === 0) return bad("a node is not a tagged list");
      const tag = n[0];
      if (typeof tag !== "string" || n.length !== arity(tag)) return bad("unknown tag or wrong arity");
      if (tag !== "a" && tag !== "o" && tag !== "M" && tag !== "S" && tag !== "E") return leaf(n, tag);
      if (depth >= MAX_DEPTH) return bad(DEEP);
      return container(n, tag, depth);
    };
    try {
      return node(tree, 0);
    } catch (caught) {
      const reason = caught === MALFORMED ? malformedReason : "could not be rebuilt";
      const error = new TypeErrorCtor(`decode: malformed codec text (${reason})`);
      defineProperty(error, "reason", { value: reason, configurable: true, writable: true });
      throw error;
    } finally {
      descriptor.value = undefined;
    }
  };

  return { __proto__: null, decode };
}
