import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";

/**
 * HOST side of the membrane codec (the guest side is the kernel's `plugin` profile, `src/plugin/guest-codec.ts` in
 * @suaveplan/sandbox-kernel). Values
 * cross as a JSON string of tagged nodes, so each side rebuilds them with its own realm's
 * constructors: plain data, `undefined`, `NaN`/`±Infinity`/`-0`, BigInt, Date, RegExp, Map, Set,
 * ArrayBuffer, typed arrays, DataView, Errors (name, message, code, cause) and cycles.
 * Functions and symbols throw `SAND_VM_DATA_CLONE_FAILED`.
 */

/** Marks errors that the sandbox itself raised inside the guest (as opposed to plugin throws). */
export const SANDBOX_RAISED: unique symbol = Symbol("suaveplan.sandboxRaised");

/** An error decoded from the guest. */
export interface DecodedGuestError extends Error {
  code?: string;
  [SANDBOX_RAISED]?: true;
}

// Tables read with Object.hasOwn only: a guest-chosen name such as "toString" or "constructor"
// must not reach Object.prototype members.
const TYPED: Record<string, new (buffer: ArrayBuffer, offset: number, length: number) => ArrayBufferView> = {
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

function base64(view: ArrayBufferView | ArrayBuffer): string {
  const bytes =
    view instanceof ArrayBuffer
      ? Buffer.from(view)
      : Buffer.from(view.buffer, view.byteOffset, view.byteLength);
  return bytes.toString("base64");
}

function bytesFrom(text: string): ArrayBuffer {
  const buffer = Buffer.from(text, "base64");
  const out = new ArrayBuffer(buffer.byteLength);
  new Uint8Array(out).set(buffer);
  return out;
}

/** Encode a host value for the guest. @throws VmSandboxError `SAND_VM_DATA_CLONE_FAILED`. */
export function encodeHostValue(value: unknown): string {
  const seen = new Map<object, number>();
  let count = 0;
  const refuse = (what: string): never => {
    throw new VmSandboxError(
      SAND_VM_CODES.DATA_CLONE_FAILED,
      `${what} cannot be copied into the sandbox; pass plain data (objects, arrays, strings, numbers, bytes …)`,
    );
  };
  const encode = (v: unknown): unknown => {
    switch (typeof v) {
      case "string":
      case "boolean":
        return v;
      case "number":
        if (Number.isNaN(v)) return ["n", "NaN"];
        if (v === Number.POSITIVE_INFINITY) return ["n", "Infinity"];
        if (v === Number.NEGATIVE_INFINITY) return ["n", "-Infinity"];
        if (Object.is(v, -0)) return ["n", "-0"];
        return v;
      case "undefined":
        return ["u"];
      case "bigint":
        return ["i", v.toString()];
      case "symbol":
        return refuse("a symbol");
      case "function":
        return refuse("a function");
    }
    if (v === null) return null;
    const object = v as object;
    const ref = seen.get(object);
    if (ref !== undefined) return ["r", ref];
    seen.set(object, count++);
    if (Array.isArray(object)) return ["a", Array.from(object, encode)];
    const tag = Reflect.apply(typedArrayTag, object, []);
    if (tag !== undefined) return ["t", tag, base64(object as ArrayBufferView)];
    if (object instanceof DataView) return ["t", "DataView", base64(object)];
    if (object instanceof ArrayBuffer) return ["b", base64(object)];
    if (object instanceof Date) {
      const time = object.getTime();
      return ["d", Number.isNaN(time) ? null : time];
    }
    if (object instanceof RegExp) return ["x", object.source, object.flags];
    if (object instanceof Map) return ["m", Array.from(object, ([k, val]) => [encode(k), encode(val)])];
    if (object instanceof Set) return ["s", Array.from(object, encode)];
    if (object instanceof Error) {
      // Host errors cross without their stack: guests never see host frames or paths.
      const fields: Record<string, unknown> = { name: object.name, message: object.message };
      const code = (object as { code?: unknown }).code;
      if (typeof code === "string") fields.code = code;
      if ("cause" in object) fields.cause = encode(object.cause);
      return ["e", fields];
    }
    if (
      object instanceof Promise ||
      object instanceof WeakMap ||
      object instanceof WeakSet ||
      object instanceof WeakRef
    ) {
      return refuse(`a ${object.constructor.name}`);
    }
    return ["o", Object.keys(object).map((key) => [key, encode((object as Record<string, unknown>)[key])])];
  };
  return JSON.stringify(encode(value));
}

const SPECIAL_NUMBERS: Record<string, number> = {
  NaN: Number.NaN,
  Infinity: Number.POSITIVE_INFINITY,
  "-Infinity": Number.NEGATIVE_INFINITY,
};

const malformed = () =>
  new VmSandboxError(SAND_VM_CODES.DATA_CLONE_FAILED, "a value from the sandbox had an unknown shape");

/**
 * Decode a guest payload into host values. Never throws anything but a `VmSandboxError`: a
 * malformed or too deeply nested payload is `SAND_VM_DATA_CLONE_FAILED`.
 */
export function decodeGuestValue(text: string): unknown {
  try {
    return decodeUnchecked(text);
  } catch (error) {
    if (error instanceof VmSandboxError) throw error;
    throw new VmSandboxError(
      SAND_VM_CODES.DATA_CLONE_FAILED,
      `a value from the sandbox could not be copied to the host (${error instanceof RangeError ? "nested too deeply" : "malformed"})`,
    );
  }
}

function decodeUnchecked(text: string): unknown {
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
        return Object.hasOwn(SPECIAL_NUMBERS, String(n[1])) ? SPECIAL_NUMBERS[String(n[1])] : -0;
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
          Object.defineProperty(out, key, {
            value: decode(val),
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
        return out;
      }
      case "d":
        return keep(new Date(n[1] === null ? Number.NaN : (n[1] as number)));
      case "x":
        return keep(new RegExp(n[1] as string, n[2] as string));
      case "m": {
        const out = keep(new Map<unknown, unknown>());
        for (const [key, val] of n[1] as [unknown, unknown][]) out.set(decode(key), decode(val));
        return out;
      }
      case "s": {
        const out = keep(new Set<unknown>());
        for (const item of n[1] as unknown[]) out.add(decode(item));
        return out;
      }
      case "b":
        return keep(bytesFrom(n[1] as string));
      case "t": {
        const buffer = bytesFrom(n[2] as string);
        if (n[1] === "DataView") return keep(new DataView(buffer));
        const Ctor = Object.hasOwn(TYPED, String(n[1]))
          ? (TYPED[String(n[1])] as typeof Uint8Array)
          : Uint8Array;
        const width = (Ctor as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
        return keep(new Ctor(buffer, 0, buffer.byteLength / width));
      }
      case "e": {
        const f = n[1] as {
          name: string;
          message: string;
          stack?: string;
          code?: string;
          sandbox?: boolean;
          cause?: unknown;
        };
        const known = Object.hasOwn(ERRORS, String(f.name));
        const error = keep(
          new ((known ? ERRORS[String(f.name)] : undefined) ?? Error)(String(f.message)) as DecodedGuestError,
        );
        if (!known)
          Object.defineProperty(error, "name", { value: f.name, writable: true, configurable: true });
        Object.defineProperty(error, "stack", {
          value: f.stack ?? `${f.name}: ${f.message}`,
          writable: true,
          configurable: true,
        });
        if (typeof f.code === "string") error.code = f.code;
        if (f.sandbox === true) Object.defineProperty(error, SANDBOX_RAISED, { value: true });
        if ("cause" in f)
          Object.defineProperty(error, "cause", {
            value: decode(f.cause),
            writable: true,
            configurable: true,
          });
        return error;
      }
      default:
        throw malformed();
    }
  };
  return decode(JSON.parse(text));
}
