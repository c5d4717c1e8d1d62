import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. The crypto subset (`getRandomValues`, `randomUUID`, `subtle.digest` for SHA-1/256/
 * 384/512) backed by the host's CSPRNG and hashes, and a console whose `log/info/warn/error/debug`
 * are formatted here, as Node formats them, and routed to the host's `onLog` as text.
 */
export function installGuestCryptoAndConsole(kit: GuestKit): void {
  const INTEGER_ARRAYS = new Set([
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "BigInt64Array",
    "BigUint64Array",
  ]);
  const DIGESTS: Record<string, string> = {
    "SHA-1": "sha1",
    "SHA-256": "sha256",
    "SHA-384": "sha384",
    "SHA-512": "sha512",
  };
  const typedArrayTag = Object.getOwnPropertyDescriptor(
    Object.getPrototypeOf(Uint8Array.prototype),
    Symbol.toStringTag,
  )?.get as (this: unknown) => string | undefined;
  const domError = (name: string, message: string) => {
    const error = new Error(message);
    Object.defineProperty(error, "name", { value: name, writable: true, configurable: true });
    return error;
  };

  const getRandomValues = <T extends ArrayBufferView>(array: T): T => {
    const tag = Reflect.apply(typedArrayTag, array, []);
    if (tag === undefined || !INTEGER_ARRAYS.has(tag)) {
      throw domError("TypeMismatchError", "getRandomValues needs an integer TypedArray");
    }
    if (array.byteLength > 65_536) {
      throw domError(
        "QuotaExceededError",
        `getRandomValues can fill at most 65536 bytes, got ${array.byteLength}`,
      );
    }
    const bytes = kit.fromBase64(kit.call("crypto.random", array.byteLength) as string);
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(bytes);
    return array;
  };
  const randomUUID = (): string => kit.call("crypto.uuid") as string;
  const digest = (algorithm: unknown, data: unknown): Promise<ArrayBuffer> =>
    new Promise((resolve) => {
      const name = String(
        typeof algorithm === "object" && algorithm !== null
          ? (algorithm as { name?: unknown }).name
          : algorithm,
      );
      const hash = DIGESTS[name.toUpperCase()];
      if (hash === undefined)
        throw domError("NotSupportedError", `digest algorithm ${name} is not supported`);
      const bytes = kit.toBytes(data, "digest data");
      resolve(
        kit.fromBase64(kit.call("crypto.digest", hash, kit.toBase64(bytes)) as string).buffer as ArrayBuffer,
      );
    });
  kit.globals.crypto = { getRandomValues, randomUUID, subtle: { digest } };

  // A line is formatted here, on the plugin's own values (the kernel's inspect: Node's
  // `util.format`, objects to depth 4), and crosses as text no longer than a copy may be. A string
  // argument that alone passes that bound is not joined at all.
  const maxChars = Math.floor(kit.config.maxPayloadBytes / 2);
  const TOO_LARGE = "[larger than the copy limit]";
  const route =
    (level: string) =>
    (...args: unknown[]): void => {
      try {
        for (let i = 0; i < args.length; i++) {
          const arg = args[i];
          if (typeof arg === "string" && arg.length > maxChars) args[i] = TOO_LARGE;
        }
        const text = kit.format(args, 4, maxChars);
        kit.call("log", level, text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text);
      } catch {
        // Logging never throws into plugin code.
      }
    };
  kit.globals.console = {
    log: route("log"),
    info: route("info"),
    warn: route("warn"),
    error: route("error"),
    debug: route("debug"),
  };
}
