import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. The membrane codec: guest values <-> a JSON string of tagged nodes (the same format
 * as `membrane/host-codec.ts`). Everything a guest receives is rebuilt here with guest-realm
 * constructors, so no host object is ever handed to plugin code. Also installs `structuredClone`
 * (= decode(encode(value))), which follows the same rules as the platform's: own enumerable
 * string keys, prototypes dropped, cycles kept, functions and symbols refused with DataCloneError.
 */
export function installGuestCodec(kit: GuestKit): void {
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const INDEX = new Uint8Array(128);
  for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;
  const TYPED: Record<
    string,
    { new (buffer: ArrayBuffer, offset: number, length: number): ArrayBufferView; BYTES_PER_ELEMENT: number }
  > = {
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  };
  const ERRORS: Record<string, ErrorConstructor> = {
    Error,
    EvalError,
    RangeError,
    ReferenceError,
    SyntaxError,
    TypeError,
    URIError,
  };
  const typedArrayTag = Object.getOwnPropertyDescriptor(
    Object.getPrototypeOf(Uint8Array.prototype),
    Symbol.toStringTag,
  )?.get as (this: unknown) => string | undefined;
  const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get as (
    this: unknown,
  ) => number;
  const apply = Reflect.apply;
  const define = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const objectPrototype = Object.prototype;
  const brand = (fn: (...args: unknown[]) => unknown, value: unknown): boolean => {
    try {
      apply(fn, value, []);
      return true;
    } catch {
      return false;
    }
  };

  kit.toBase64 = (bytes) => {
    let out = "";
    let i = 0;
    for (; i + 2 < bytes.length; i += 3) {
      const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
      out += `${ALPHABET[n >> 18]}${ALPHABET[(n >> 12) & 63]}${ALPHABET[(n >> 6) & 63]}${ALPHABET[n & 63]}`;
    }
    const rest = bytes.length - i;
    if (rest === 1) {
      const n = (bytes[i] as number) << 16;
      out += `${ALPHABET[n >> 18]}${ALPHABET[(n >> 12) & 63]}==`;
    } else if (rest === 2) {
      const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
      out += `${ALPHABET[n >> 18]}${ALPHABET[(n >> 12) & 63]}${ALPHABET[(n >> 6) & 63]}=`;
    }
    return out;
  };

  kit.fromBase64 = (text) => {
    let end = text.length;
    while (end > 0 && text[end - 1] === "=") end--;
    const out = new Uint8Array(Math.floor((end * 3) / 4));
    let bits = 0;
    let acc = 0;
    let p = 0;
    for (let i = 0; i < end; i++) {
      acc = (acc << 6) | (INDEX[text.charCodeAt(i) & 127] as number);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[p++] = (acc >> bits) & 255;
      }
    }
    return out;
  };

  const cloneError = (what: string) =>
    kit.makeError(
      "SAND_VM_DATA_CLONE_FAILED",
      `${what} could not be cloned across the sandbox boundary`,
      "DataCloneError",
    );

  kit.toBytes = (value, what) => {
    if (typeof value === "string") return kit.utf8Encode(value);
    if (ArrayBuffer.isView(value))
      return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).slice();
    if (brand(bufferByteLength as never, value)) return new Uint8Array(value as ArrayBuffer).slice();
    throw new TypeError(`${what} must be a string, an ArrayBuffer or an ArrayBuffer view`);
  };

  const describe = (value: unknown): string => {
    if (typeof value === "function")
      return `[Function ${(value as { name?: unknown }).name || "(anonymous)"}]`;
    if (typeof value === "symbol") return String(value);
    return "[object]";
  };

  const maxBytes = kit.config.maxPayloadBytes;
  kit.encode = (value, lenient = false) => {
    const seen = new Map<object, number>();
    let count = 0;
    /** UTF-16 code units the text will hold: strings, keys and base64 before JSON escaping, other nodes roughly. */
    let units = 0;
    const refuse = (v: unknown, what: string): unknown => {
      if (lenient) return describe(v);
      throw cloneError(what);
    };
    /** Counts `n` more units; past the budget the value is refused (a log line says so instead). */
    const fits = (n: number): boolean => {
      if ((units + n) * 2 <= maxBytes) {
        units += n;
        return true;
      }
      if (lenient) return false;
      throw cloneError(`a value larger than ${maxBytes} bytes (half of the sandbox's memory limit)`);
    };
    const TOO_LARGE = "[larger than the copy limit]";
    const bytes = (tag: string[], view: Uint8Array): unknown =>
      fits(Math.ceil(view.byteLength / 3) * 4 + 8) ? [...tag, kit.toBase64(view)] : TOO_LARGE;
    const encode = (v: unknown): unknown => {
      switch (typeof v) {
        case "string":
          return fits(v.length + 3) ? v : TOO_LARGE;
        case "boolean":
          fits(6);
          return v;
        case "number":
          if (Number.isNaN(v)) return ["n", "NaN"];
          if (v === Number.POSITIVE_INFINITY) return ["n", "Infinity"];
          if (v === Number.NEGATIVE_INFINITY) return ["n", "-Infinity"];
          if (v === 0 && 1 / v < 0) return ["n", "-0"];
          fits(24);
          return v;
        case "undefined":
          return ["u"];
        case "bigint": {
          const digits = String(v);
          return fits(digits.length + 8) ? ["i", digits] : TOO_LARGE;
        }
        case "symbol":
          return refuse(v, "a symbol");
        case "function":
          return refuse(v, "a function");
      }
      fits(8);
      if (v === null) return null;
      const object = v as object;
      const ref = seen.get(object);
      if (ref !== undefined) return ["r", ref];
      seen.set(object, count++);
      if (Array.isArray(object)) {
        const items: unknown[] = [];
        for (let i = 0; i < object.length; i++) items.push(encode(object[i]));
        return ["a", items];
      }
      // An ordinary object (the realm's Object.prototype or none) skips the brand checks below:
      // each one that fails throws, and four throws an object made copying out ~50 µs an object.
      // A Map, Date or buffer given such a prototype is copied as the plain object it claims to be
      // (as the engines' codec, sandbox-guest's classify, does).
      const proto = getPrototypeOf(object);
      if (proto === objectPrototype || proto === null) return ordinary(object);
      const tag = apply(typedArrayTag, object, []);
      if (tag !== undefined) {
        const view = object as Uint8Array;
        return bytes(["t", tag], new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
      }
      if (ArrayBuffer.isView(object)) {
        return bytes(["t", "DataView"], new Uint8Array(object.buffer, object.byteOffset, object.byteLength));
      }
      if (brand(bufferByteLength as never, object))
        return bytes(["b"], new Uint8Array(object as ArrayBuffer));
      if (brand(Date.prototype.getTime as never, object)) {
        const time = apply(Date.prototype.getTime, object, []) as number;
        return ["d", Number.isNaN(time) ? null : time];
      }
      if (object instanceof RegExp) return ["x", object.source, object.flags];
      if (brand(Map.prototype.has as never, object)) {
        const entries: unknown[] = [];
        apply(Map.prototype.forEach, object, [
          (val: unknown, key: unknown) => entries.push([encode(key), encode(val)]),
        ]);
        return ["m", entries];
      }
      if (brand(Set.prototype.has as never, object)) {
        const items: unknown[] = [];
        apply(Set.prototype.forEach, object, [(val: unknown) => items.push(encode(val))]);
        return ["s", items];
      }
      if (object instanceof Error) {
        const e = object as Error & { code?: unknown; cause?: unknown };
        const text = (part: string): string => (fits(part.length + 12) ? part : TOO_LARGE);
        const fields: Record<string, unknown> = {
          name: text(String(e.name)),
          message: text(String(e.message)),
        };
        const stack = e.stack;
        if (typeof stack === "string") fields.stack = text(stack);
        if (typeof e.code === "string") fields.code = e.code;
        if (kit.isSandboxRaised(e)) fields.sandbox = true;
        if (Object.hasOwn(e, "cause")) fields.cause = encode(e.cause);
        return ["e", fields];
      }
      if (
        object instanceof Promise ||
        object instanceof WeakMap ||
        object instanceof WeakSet ||
        object instanceof WeakRef
      ) {
        return refuse(object, `a ${object.constructor.name}`);
      }
      return ordinary(object);
    };
    const ordinary = (object: object): unknown => {
      const entries: unknown[] = [];
      for (const key of Object.keys(object)) {
        if (!fits(key.length + 6)) continue;
        entries.push([key, encode((object as Record<string, unknown>)[key])]);
      }
      return ["o", entries];
    };
    return JSON.stringify(encode(value));
  };

  kit.decode = (text) => {
    const refs: unknown[] = [];
    const keep = <T>(value: T): T => {
      refs.push(value);
      return value;
    };
    const decode = (node: unknown): unknown => {
      if (node === null || typeof node !== "object") return node;
      const n = node as unknown[];
      switch (n[0]) {
        case "u":
          return undefined;
        case "n":
          return n[1] === "NaN"
            ? Number.NaN
            : n[1] === "Infinity"
              ? Number.POSITIVE_INFINITY
              : n[1] === "-Infinity"
                ? Number.NEGATIVE_INFINITY
                : -0;
        case "i":
          return BigInt(n[1] as string);
        case "r":
          return refs[n[1] as number];
        case "a": {
          const out = keep([] as unknown[]);
          for (const item of n[1] as unknown[]) out.push(decode(item));
          return out;
        }
        case "o": {
          const out = keep({} as Record<string, unknown>);
          for (const [key, val] of n[1] as [string, unknown][]) {
            define(out, key, { value: decode(val), writable: true, enumerable: true, configurable: true });
          }
          return out;
        }
        case "d":
          return keep(new Date(n[1] === null ? Number.NaN : (n[1] as number)));
        case "x":
          return keep(new RegExp(n[1] as string, n[2] as string));
        case "m": {
          const out = keep(new Map());
          for (const [key, val] of n[1] as [unknown, unknown][]) out.set(decode(key), decode(val));
          return out;
        }
        case "s": {
          const out = keep(new Set());
          for (const item of n[1] as unknown[]) out.add(decode(item));
          return out;
        }
        case "b":
          return keep(kit.fromBase64(n[1] as string).buffer as ArrayBuffer);
        case "t": {
          const bytes = kit.fromBase64(n[2] as string);
          if (n[1] === "DataView") return keep(new DataView(bytes.buffer as ArrayBuffer));
          const Ctor = Object.hasOwn(TYPED, String(n[1]))
            ? (TYPED[String(n[1])] as typeof Uint8Array)
            : Uint8Array;
          return keep(new Ctor(bytes.buffer as ArrayBuffer, 0, bytes.byteLength / Ctor.BYTES_PER_ELEMENT));
        }
        case "e": {
          const f = n[1] as {
            name: string;
            message: string;
            code?: string;
            sandbox?: boolean;
            cause?: unknown;
          };
          const error =
            f.sandbox === true && typeof f.code === "string"
              ? kit.makeError(f.code, f.message, f.name)
              : new ((Object.hasOwn(ERRORS, String(f.name)) ? ERRORS[String(f.name)] : undefined) ?? Error)(
                  String(f.message),
                );
          keep(error);
          if (!Object.hasOwn(ERRORS, String(f.name)) && f.sandbox !== true)
            define(error, "name", { value: f.name, writable: true, configurable: true });
          if (typeof f.code === "string" && f.sandbox !== true)
            define(error, "code", { value: f.code, enumerable: true });
          if ("cause" in f)
            define(error, "cause", { value: decode(f.cause), writable: true, configurable: true });
          return error;
        }
        default:
          throw cloneError("an unknown value");
      }
    };
    return decode(JSON.parse(text));
  };

  kit.globals.structuredClone = function structuredClone(value: unknown) {
    return kit.decode(kit.encode(value));
  };
}
