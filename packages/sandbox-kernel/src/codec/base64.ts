import type { Intrinsics } from "./intrinsics.js";
import type { Kinds } from "./kinds.js";

/**
 * GUEST REALM. Base64 of bytes, for typed arrays, views and buffers: the digit tables and the
 * encoder (`fromBase64` is in decode.ts, where a bad digit is a malformed text).
 */
export function makeBase64(I: Intrinsics, K: Kinds) {
  const { Int16ArrayCtor, Uint16ArrayCtor, apply, fromCharCode, mathMin } = I;
  const { arrayJoin, charCodeAt, list, once, typedSubarray } = K;

  const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  /** The value of each base64 digit by its character code, -1 for any other code below 128. */
  const base64Values = once(() => {
    const values = new Int16ArrayCtor(128);
    for (let i = 0; i < 128; i++) values[i] = -1;
    for (let i = 0; i < 64; i++) values[charCodeAt(BASE64, i)] = i;
    return values;
  });
  /** The character code of each base64 digit. */
  const base64Digits = once(() => {
    const digits = new Uint16ArrayCtor(64);
    for (let i = 0; i < 64; i++) digits[i] = charCodeAt(BASE64, i);
    return digits;
  });
  /** A reusable buffer of character codes, made on first use. */
  let base64Codes: Uint16Array | undefined;

  /** Base64 of the first `n` bytes, written 6 KiB at a time into a small code buffer (flat, no rope). */
  const toBase64 = (bytes: Uint8Array, n: number): string => {
    const digits = base64Digits();
    let codes = base64Codes;
    if (codes === undefined) {
      codes = new Uint16ArrayCtor(8192);
      base64Codes = codes;
    }
    const parts = list<string>();
    let i = 0;
    while (i < n) {
      const end = mathMin(n, i + 6144);
      let c = 0;
      for (; i + 2 < end; i += 3) {
        const x = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
        codes[c++] = digits[x >>> 18] as number;
        codes[c++] = digits[(x >>> 12) & 63] as number;
        codes[c++] = digits[(x >>> 6) & 63] as number;
        codes[c++] = digits[x & 63] as number;
      }
      if (end === n && n - i === 1) {
        const x = (bytes[i] as number) << 16;
        codes[c++] = digits[x >>> 18] as number;
        codes[c++] = digits[(x >>> 12) & 63] as number;
        codes[c++] = 61;
        codes[c++] = 61;
        i = n;
      } else if (end === n && n - i === 2) {
        const x = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
        codes[c++] = digits[x >>> 18] as number;
        codes[c++] = digits[(x >>> 12) & 63] as number;
        codes[c++] = digits[(x >>> 6) & 63] as number;
        codes[c++] = 61;
        i = n;
      }
      parts[parts.length] = apply(
        fromCharCode,
        undefined,
        typedSubarray(codes, 0, c) as Uint16Array,
      ) as string;
    }
    return parts.length === 1 ? (parts[0] as string) : (arrayJoin(parts, "") as string);
  };

  return { __proto__: null, base64Values, toBase64 };
}

export type Base64 = ReturnType<typeof makeBase64>;
