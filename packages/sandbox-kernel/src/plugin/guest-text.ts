import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. UTF-8 `TextEncoder` / `TextDecoder` (WHATWG Encoding: replacement of invalid
 * sequences with U+FFFD by maximal subpart, `fatal`, `ignoreBOM`, `stream`). Only UTF-8 labels.
 */
export function installGuestText(kit: GuestKit): void {
  const LABELS = new Set([
    "utf-8",
    "utf8",
    "unicode-1-1-utf-8",
    "unicode11utf8",
    "unicode20utf8",
    "x-unicode20utf8",
  ]);
  const fromCodePoint = String.fromCodePoint;
  const apply = Reflect.apply;

  const codePointAt = (text: string, i: number): [number, number] => {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) return [0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00), 2];
    }
    if (c >= 0xd800 && c <= 0xdfff) return [0xfffd, 1];
    return [c, 1];
  };
  const byteCount = (cp: number) => (cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
  const put = (out: Uint8Array, p: number, cp: number): number => {
    if (cp < 0x80) out[p++] = cp;
    else if (cp < 0x800) {
      out[p++] = 0xc0 | (cp >> 6);
      out[p++] = 0x80 | (cp & 63);
    } else if (cp < 0x10000) {
      out[p++] = 0xe0 | (cp >> 12);
      out[p++] = 0x80 | ((cp >> 6) & 63);
      out[p++] = 0x80 | (cp & 63);
    } else {
      out[p++] = 0xf0 | (cp >> 18);
      out[p++] = 0x80 | ((cp >> 12) & 63);
      out[p++] = 0x80 | ((cp >> 6) & 63);
      out[p++] = 0x80 | (cp & 63);
    }
    return p;
  };

  kit.utf8Encode = (text) => {
    const out = new Uint8Array(text.length * 3);
    let p = 0;
    for (let i = 0; i < text.length; ) {
      const [cp, units] = codePointAt(text, i);
      p = put(out, p, cp);
      i += units;
    }
    return out.slice(0, p);
  };

  interface DecodeState {
    cp: number;
    needed: number;
    seen: number;
    lower: number;
    upper: number;
  }
  const freshState = (): DecodeState => ({ cp: 0, needed: 0, seen: 0, lower: 0x80, upper: 0xbf });

  const decodeInto = (bytes: Uint8Array, state: DecodeState, flush: boolean, fatal: boolean): number[] => {
    const out: number[] = [];
    const fail = () => {
      if (fatal) throw new TypeError("The encoded data was not valid for encoding utf-8");
      out.push(0xfffd);
    };
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i] as number;
      if (state.needed === 0) {
        if (b <= 0x7f) out.push(b);
        else if (b >= 0xc2 && b <= 0xdf) {
          state.needed = 1;
          state.cp = b & 0x1f;
        } else if (b >= 0xe0 && b <= 0xef) {
          if (b === 0xe0) state.lower = 0xa0;
          if (b === 0xed) state.upper = 0x9f;
          state.needed = 2;
          state.cp = b & 0xf;
        } else if (b >= 0xf0 && b <= 0xf4) {
          if (b === 0xf0) state.lower = 0x90;
          if (b === 0xf4) state.upper = 0x8f;
          state.needed = 3;
          state.cp = b & 0x7;
        } else fail();
        continue;
      }
      if (b < state.lower || b > state.upper) {
        Object.assign(state, freshState());
        fail();
        i--;
        continue;
      }
      state.lower = 0x80;
      state.upper = 0xbf;
      state.cp = (state.cp << 6) | (b & 0x3f);
      state.seen++;
      if (state.seen === state.needed) {
        out.push(state.cp);
        Object.assign(state, freshState());
      }
    }
    if (flush && state.needed !== 0) {
      Object.assign(state, freshState());
      fail();
    }
    return out;
  };

  const toText = (codePoints: number[]): string => {
    let text = "";
    for (let i = 0; i < codePoints.length; i += 4096)
      text += apply(fromCodePoint, undefined, codePoints.slice(i, i + 4096));
    return text;
  };

  kit.utf8Decode = (bytes) => toText(decodeInto(bytes, freshState(), true, false));

  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(input = ""): Uint8Array {
      return kit.utf8Encode(String(input));
    }
    encodeInto(source: string, destination: Uint8Array): { read: number; written: number } {
      if (!(destination instanceof Uint8Array)) throw new TypeError("destination must be a Uint8Array");
      const text = String(source);
      let read = 0;
      let written = 0;
      while (read < text.length) {
        const [cp, units] = codePointAt(text, read);
        if (written + byteCount(cp) > destination.length) break;
        written = put(destination, written, cp);
        read += units;
      }
      return { read, written };
    }
  }

  class TextDecoder {
    readonly #fatal: boolean;
    readonly #ignoreBOM: boolean;
    #state = freshState();
    #bomSeen = false;
    constructor(label = "utf-8", options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
      if (!LABELS.has(String(label).trim().toLowerCase())) {
        throw new RangeError(`The "${String(label)}" encoding is not supported in this sandbox (UTF-8 only)`);
      }
      this.#fatal = Boolean(options.fatal);
      this.#ignoreBOM = Boolean(options.ignoreBOM);
    }
    get encoding() {
      return "utf-8";
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input?: ArrayBuffer | ArrayBufferView, options: { stream?: boolean } = {}): string {
      const bytes = input === undefined ? new Uint8Array(0) : kit.toBytes(input, "TextDecoder.decode input");
      const stream = Boolean(options.stream);
      let codePoints: number[];
      try {
        codePoints = decodeInto(bytes, this.#state, !stream, this.#fatal);
      } catch (error) {
        this.#state = freshState();
        this.#bomSeen = false;
        throw error;
      }
      if (!this.#ignoreBOM && !this.#bomSeen && codePoints.length > 0) {
        this.#bomSeen = true;
        if (codePoints[0] === 0xfeff) codePoints = codePoints.slice(1);
      }
      if (!stream) this.#bomSeen = false;
      return toText(codePoints);
    }
  }

  kit.globals.TextEncoder = TextEncoder;
  kit.globals.TextDecoder = TextDecoder;
}
