import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. The plugin's side of the membrane on the kernel's codec (`installCodec`, installed
 * before this part; the host runs the same codec, `createHostCodec`). This part adds what the
 * plugin host says differently:
 *
 * - `kit.copyOut(value, root)`: the codec text of a value leaving the plugin, within the copy
 *   limit (`maxPayloadBytes`, half of `memoryLimitMb`); a value that cannot cross throws a guest
 *   `DataCloneError` with code `SAND_VM_DATA_CLONE_FAILED` naming where it is.
 * - `kit.thrownOut(value)`: the text of a value the plugin threw, which always crosses: when it
 *   cannot cross whole, an error crosses as its name, message, stack and code (its other keys and
 *   its `cause` are dropped and `copyIssue` says why), and anything else as its text (as
 *   `console.log` would print it, cut at the copy limit).
 * - base64 for the host bridge's byte operations, `toBytes`, and `structuredClone`
 *   (`decode(copyOut(value))`: the platform's rules, prototypes dropped, a disguised built-in
 *   copied as the plain object it claims to be).
 */
export function installGuestCodec(kit: GuestKit): void {
  const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const INDEX = new Uint8Array(128);
  for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;
  const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get as (
    this: unknown,
  ) => number;
  const apply = Reflect.apply;
  const define = Object.defineProperty;
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

  const maxBytes = kit.config.maxPayloadBytes;
  // A path 1000 levels deep is 3000 characters: a message names its start.
  const where = (path: string): string => (path.length > 100 ? `${path.slice(0, 99)}…` : path);
  const refusal = (record: { path: string; what: string }): Error =>
    cloneError(
      record.what.startsWith("larger than")
        ? `a value ${record.what} (half of the sandbox's memory limit)`
        : `${where(record.path)} (${record.what})`,
    );

  kit.copyOut = (value, root) => {
    try {
      return kit.encode(value, root, maxBytes);
    } catch (error) {
      if (kit.isNotTransferable(error)) throw refusal(error);
      throw error;
    }
  };

  const ErrorCtor = Error;
  const objectToString = Object.prototype.toString;
  const ownDescriptor = Object.getOwnPropertyDescriptor;
  const ownText = (value: object, key: string): string | undefined => {
    const descriptor = ownDescriptor(value, key);
    return descriptor !== undefined && typeof descriptor.value === "string" ? descriptor.value : undefined;
  };
  /** An error that cannot cross whole, as one that can: name, message, stack, code and why. */
  const substitute = (value: unknown, why: string): Error => {
    const copy = new ErrorCtor();
    const record = kit.describeError(value);
    define(copy, "message", { value: record.message, writable: true, configurable: true });
    define(copy, "name", { value: record.name, writable: true, configurable: true });
    define(copy, "stack", { value: record.stack, writable: true, configurable: true });
    const code = ownText(value as object, "code");
    if (code !== undefined) define(copy, "code", { value: code, enumerable: true });
    define(copy, "copyIssue", { value: why, enumerable: true });
    return copy;
  };

  kit.thrownOut = (value) => {
    const raised = kit.isSandboxRaised(value);
    try {
      return { text: kit.encode(value, "thrown", maxBytes), raised };
    } catch (error) {
      const why = kit.isNotTransferable(error)
        ? `${where(error.path)} (${error.what}) could not be copied out of the sandbox`
        : "reading it threw";
      try {
        const isError =
          typeof value === "object" &&
          value !== null &&
          apply(objectToString, value, []) === "[object Error]";
        // Anything else crosses as its text, bounded like a console line.
        const stand = isError ? substitute(value, why) : kit.format([value], 2, maxBytes / 2);
        return { text: kit.encode(stand, "thrown", maxBytes), raised };
      } catch {
        const failure = cloneError("a value the plugin threw");
        return { text: kit.encode(failure, "thrown", maxBytes), raised: true };
      }
    }
  };

  kit.globals.structuredClone = function structuredClone(value: unknown) {
    return kit.decode(kit.copyOut(value, "value"));
  };
}
