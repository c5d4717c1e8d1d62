import type { KernelKit } from "../kit.js";

/**
 * GUEST REALM. `URL` and `URLSearchParams`, implemented here, in the guest
 * realm, with no host object behind them, so every engine has the same ones.
 *
 * The parser is the WHATWG URL Standard's basic URL parser (special schemes,
 * opaque paths, IPv4 numbers in decimal/hex/octal parts, IPv6, percent-encode
 * sets, `.`/`..` segments, Windows drive letters, credentials, default ports,
 * setters as state overrides) and follows the standard as Node 24's `URL`
 * (Ada 4) does; it copies no older parser's departures. Node 20 and 22 (with
 * Ada 2.9) differ from it, and so from this part, where: the path
 * percent-encode set holds `^` (they leave it); an opaque path's space just
 * before `?` or `#` is `%20` (they keep the space, and strip trailing spaces
 * when the query and fragment go); `..` on an empty non-special path leaves
 * `/` (`sc://h/..` is `sc://h/`; they give `sc://h`); the `host` setter gives
 * a non-special URL without a host an empty host (`sc:/p` to `sc:///p`) and a
 * port after the host, and refuses an empty host before `:`; the `port`
 * setter (and the `host` setter's part after `:`) changes nothing for text
 * not starting with a digit (`%41`, `+1`, `a1`; they clear the port); a
 * relative input holding `#` against an opaque-path base fails (`new URL("a#",
 * "sc:x")`; they give `sc:x/a#`); `new URLSearchParams(null)` is `null=` (they
 * give an empty list); and the `xn--` labels of hosts, as below. Errors carry
 * Node's text (the same on 20, 22 and 24): `TypeError: Invalid URL` with
 * `code` `ERR_INVALID_URL` and `input` (and `base`).
 *
 * Hosts: an ASCII host (after percent-decoding) is lower-cased and its `xn--`
 * labels are taken as they are (`http://xn--a/` parses), as Node 24 does;
 * Node 20 and 22 decode those labels and refuse invalid ones. In a non-ASCII
 * host, an `xn--` label must decode to a valid label holding a non-ASCII code
 * point (`xn--a-.ü` fails, as on Node 24; Node 20 and 22 keep it). Full
 * IDNA (UTS #46) needs large Unicode tables, which are not shipped: a
 * non-ASCII host is lower-cased,
 * NFKC-normalised (UTS #46's mapping is built from NFKC case folding), has its
 * ideographic full stops mapped to `.` and soft hyphens removed, and each
 * non-ASCII label is Punycode-encoded (RFC 3492); unassigned, control,
 * private-use and surrogate code points and a label starting with a combining
 * mark are refused (the engine's own Unicode data, through regex property
 * escapes). A host that needs another UTS #46 mapping, or that UTS #46 rejects
 * for other reasons (other disallowed code points, bidi and joiner rules), may
 * come out differently from a browser or Node.
 *
 * Cost: this part runs in every fresh realm, so installing only defines the
 * two classes; the parser is built on first use.
 */
export function installUrl(kit: KernelKit): void {
  const { apply, defineProperty, getOwnPropertyDescriptor, ownKeys, getPrototypeOf } = Reflect;
  const setPrototypeOf = Object.setPrototypeOf;
  const WeakMapCtor = WeakMap;
  const TypeErrorCtor = TypeError;
  // Uncurried once (`call.bind(method)`): a call passes no argument array, unlike Reflect.apply.
  const callBind = Function.prototype.bind.bind(Function.prototype.call) as <A extends unknown[], R>(
    method: (...args: A) => R,
  ) => (self: unknown, ...args: A) => R;
  const charCodeAt = callBind(String.prototype.charCodeAt);
  const toLowerCase = callBind(String.prototype.toLowerCase);
  const normalize = callBind(String.prototype.normalize);
  const numberToString = callBind(Number.prototype.toString);
  const sliceString = callBind(String.prototype.slice);
  const regExpExec = callBind(RegExp.prototype.exec);
  const wmGetOf = callBind(WeakMap.prototype.get) as (map: WeakMap<object, unknown>, key: unknown) => unknown;
  const wmSetOf = callBind(WeakMap.prototype.set) as (
    map: WeakMap<object, unknown>,
    key: object,
    value: unknown,
  ) => unknown;
  const create = Object.create;
  const fromCharCode = String.fromCharCode;
  const fromCodePoint = String.fromCodePoint;
  const floor = Math.floor;
  const SymbolIterator = Symbol.iterator;
  const SymbolToStringTag = Symbol.toStringTag;
  const iteratorPrototype = getPrototypeOf(getPrototypeOf([].values()) as object) as object;

  // ---- types (erased) ------------------------------------------------------
  interface UrlRecord {
    scheme: string;
    username: string;
    password: string;
    /** Serialised host (`[::1]` for IPv6); null when there is none. */
    host: string | null;
    port: number | null;
    /** A list of segments, or a string when the path is opaque. */
    path: string[] | string;
    query: string | null;
    fragment: string | null;
  }
  interface UrlState {
    rec: UrlRecord;
    params: object | null;
  }
  interface ParamsState {
    list: [string, string][];
    url: UrlState | null;
  }
  interface Parser {
    parse(input: string, base: UrlRecord | null): UrlRecord | null;
    override(input: string, url: UrlRecord, state: number): boolean;
    serialize(url: UrlRecord, excludeFragment: boolean): string;
    origin(url: UrlRecord): string;
    pathString(url: UrlRecord): string;
    percentEncodeString(input: string, set: number, spaceAsPlus: boolean): string;
    formParse(input: string): [string, string][];
    formSerialize(list: [string, string][]): string;
    usv(value: unknown): string;
  }

  const urls: WeakMap<object, UrlState> = new WeakMapCtor();
  const paramsStates: WeakMap<object, ParamsState> = new WeakMapCtor();
  let parser: Parser | null = null;
  const P = (): Parser => {
    if (parser === null) parser = buildParser();
    return parser;
  };
  /** A list no setter on Array.prototype can see into. */
  const list = <T>(): T[] => setPrototypeOf([], null) as T[];

  // States used by the setters (the parser's own numbering, see buildParser).
  const SCHEME_START = 1;
  const HOST = 10;
  const HOSTNAME = 11;
  const PORT = 12;
  const PATH_START = 17;
  const QUERY = 20;
  const FRAGMENT = 21;
  // Percent-encode sets.
  const USERINFO = 5;
  const FORM = 7;

  function buildParser(): Parser {
    const EOF = -1;
    const SCHEME = 2;
    const NO_SCHEME = 3;
    const SPECIAL_RELATIVE_OR_AUTHORITY = 4;
    const PATH_OR_AUTHORITY = 5;
    const RELATIVE = 6;
    const RELATIVE_SLASH = 7;
    const SPECIAL_AUTHORITY_SLASHES = 8;
    const SPECIAL_AUTHORITY_IGNORE_SLASHES = 9;
    const AUTHORITY = 13;
    const FILE = 14;
    const FILE_SLASH = 15;
    const FILE_HOST = 16;
    const PATH = 18;
    const OPAQUE_PATH = 19;

    const C0 = 0;
    const FRAGMENT_SET = 1;
    const QUERY_SET = 2;
    const SPECIAL_QUERY_SET = 3;
    const PATH_SET = 4;
    const COMPONENT_SET = 6;

    const inSet = (c: number, set: number): boolean => {
      if (c < 0x20 || c > 0x7e) return true;
      if (set === C0) return false;
      if (set === FRAGMENT_SET) return c === 0x20 || c === 0x22 || c === 0x3c || c === 0x3e || c === 0x60;
      if (c === 0x20 || c === 0x22 || c === 0x23 || c === 0x3c || c === 0x3e) return true;
      if (set === QUERY_SET) return false;
      if (set === SPECIAL_QUERY_SET) return c === 0x27;
      if (c === 0x3f || c === 0x5e || c === 0x60 || c === 0x7b || c === 0x7d) return true;
      if (set === PATH_SET) return false;
      if (
        c === 0x2f ||
        c === 0x3a ||
        c === 0x3b ||
        c === 0x3d ||
        c === 0x40 ||
        (c >= 0x5b && c <= 0x5e) ||
        c === 0x7c
      ) {
        return true;
      }
      if (set === USERINFO) return false;
      if (c === 0x24 || c === 0x25 || c === 0x26 || c === 0x2b || c === 0x2c) return true;
      if (set === COMPONENT_SET) return false;
      return c === 0x21 || c === 0x27 || c === 0x28 || c === 0x29 || c === 0x7e;
    };

    const HEX = "0123456789ABCDEF";
    const byteHex = (b: number): string => `%${HEX[b >> 4]}${HEX[b & 15]}`;
    const utf8Bytes = (c: number, out: number[]): void => {
      if (c < 0x80) out[out.length] = c;
      else if (c < 0x800) {
        out[out.length] = 0xc0 | (c >> 6);
        out[out.length] = 0x80 | (c & 63);
      } else if (c < 0x10000) {
        out[out.length] = 0xe0 | (c >> 12);
        out[out.length] = 0x80 | ((c >> 6) & 63);
        out[out.length] = 0x80 | (c & 63);
      } else {
        out[out.length] = 0xf0 | (c >> 18);
        out[out.length] = 0x80 | ((c >> 12) & 63);
        out[out.length] = 0x80 | ((c >> 6) & 63);
        out[out.length] = 0x80 | (c & 63);
      }
    };
    const encodeCp = (c: number, set: number, spaceAsPlus = false): string => {
      if (spaceAsPlus && c === 0x20) return "+";
      if (!inSet(c, set)) return fromCharCode(c);
      const bytes = list<number>();
      utf8Bytes(c, bytes);
      let out = "";
      for (let i = 0; i < bytes.length; i++) out += byteHex(bytes[i] as number);
      return out;
    };

    /** Code points of a string, lone surrogates as U+FFFD (USVString conversion). */
    const codePoints = (s: string): number[] => {
      const out = list<number>();
      for (let i = 0; i < s.length; i++) {
        const c = charCodeAt(s, i) as number;
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
          const d = charCodeAt(s, i + 1) as number;
          if (d >= 0xdc00 && d <= 0xdfff) {
            out[out.length] = (c - 0xd800) * 0x400 + d - 0xdc00 + 0x10000;
            i++;
            continue;
          }
        }
        out[out.length] = c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
      }
      return out;
    };
    const cpString = (cps: number[], from = 0, to = cps.length): string => {
      let out = "";
      for (let i = from; i < to; i++) out += fromCodePoint(cps[i] as number);
      return out;
    };
    const usv = (value: unknown): string => {
      // A template literal converts as WebIDL does (a Symbol throws).
      const s = `${value as string}`;
      for (let i = 0; i < s.length; i++) {
        const c = charCodeAt(s, i) as number;
        if (c >= 0xd800 && c <= 0xdfff) return cpString(codePoints(s));
      }
      return s;
    };
    const percentEncodeString = (input: string, set: number, spaceAsPlus: boolean): string => {
      let plain = true;
      for (let i = 0; i < input.length; i++) {
        const c = charCodeAt(input, i);
        if (inSet(c, set) || (spaceAsPlus && c === 0x20)) {
          plain = false;
          break;
        }
      }
      if (plain) return input;
      const cps = codePoints(input);
      let out = "";
      for (let i = 0; i < cps.length; i++) out += encodeCp(cps[i] as number, set, spaceAsPlus);
      return out;
    };

    const hexValue = (c: number): number =>
      c >= 0x30 && c <= 0x39
        ? c - 0x30
        : c >= 0x41 && c <= 0x46
          ? c - 0x37
          : c >= 0x61 && c <= 0x66
            ? c - 0x57
            : -1;
    const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
    const isAlpha = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

    /** UTF-8 decode without BOM, invalid sequences as U+FFFD (the Encoding Standard's decoder). */
    const utf8Decode = (bytes: number[]): string => {
      let out = "";
      let needed = 0;
      let seen = 0;
      let cp = 0;
      let lower = 0x80;
      let upper = 0xbf;
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i] as number;
        if (needed === 0) {
          if (b <= 0x7f) out += fromCharCode(b);
          else if (b >= 0xc2 && b <= 0xdf) {
            needed = 1;
            cp = b & 0x1f;
          } else if (b >= 0xe0 && b <= 0xef) {
            if (b === 0xe0) lower = 0xa0;
            if (b === 0xed) upper = 0x9f;
            needed = 2;
            cp = b & 0xf;
          } else if (b >= 0xf0 && b <= 0xf4) {
            if (b === 0xf0) lower = 0x90;
            if (b === 0xf4) upper = 0x8f;
            needed = 3;
            cp = b & 7;
          } else out += "\ufffd";
          continue;
        }
        if (b < lower || b > upper) {
          cp = 0;
          needed = 0;
          seen = 0;
          lower = 0x80;
          upper = 0xbf;
          out += "\ufffd";
          i--;
          continue;
        }
        lower = 0x80;
        upper = 0xbf;
        cp = (cp << 6) | (b & 0x3f);
        seen++;
        if (seen === needed) {
          out += fromCodePoint(cp);
          cp = 0;
          needed = 0;
          seen = 0;
        }
      }
      if (needed !== 0) out += "\ufffd";
      return out;
    };
    /** Percent-decode a string's UTF-8 bytes, then UTF-8 decode them. */
    const percentDecode = (input: string): string => {
      let plain = true;
      for (let i = 0; i < input.length; i++) {
        const c = charCodeAt(input, i);
        if (c === 0x25 || c >= 0x80) {
          plain = false;
          break;
        }
      }
      if (plain) return input;
      const cps = codePoints(input);
      const bytes = list<number>();
      for (let i = 0; i < cps.length; i++) utf8Bytes(cps[i] as number, bytes);
      const out = list<number>();
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i] as number;
        if (b === 0x25 && i + 2 < bytes.length) {
          const h = hexValue(bytes[i + 1] as number);
          const l = hexValue(bytes[i + 2] as number);
          if (h >= 0 && l >= 0) {
            out[out.length] = h * 16 + l;
            i += 2;
            continue;
          }
        }
        out[out.length] = b;
      }
      return utf8Decode(out);
    };

    // ---- Punycode (RFC 3492) -----------------------------------------------
    const adapt = (delta: number, numPoints: number, first: boolean): number => {
      let d = first ? floor(delta / 700) : delta >> 1;
      d += floor(d / numPoints);
      let k = 0;
      while (d > 455) {
        d = floor(d / 35);
        k += 36;
      }
      return k + floor((36 * d) / (d + 38));
    };
    const threshold = (k: number, bias: number): number => (k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias);
    const digitChar = (d: number): string => fromCharCode(d < 26 ? d + 0x61 : d + 22);
    const punycodeEncode = (cps: number[]): string => {
      let out = "";
      for (let i = 0; i < cps.length; i++)
        if ((cps[i] as number) < 0x80) out += fromCharCode(cps[i] as number);
      const basic = out.length;
      let h = basic;
      if (basic > 0) out += "-";
      let n = 128;
      let delta = 0;
      let bias = 72;
      while (h < cps.length) {
        let m = 0x7fffffff;
        for (let i = 0; i < cps.length; i++) {
          const c = cps[i] as number;
          if (c >= n && c < m) m = c;
        }
        delta += (m - n) * (h + 1);
        n = m;
        for (let i = 0; i < cps.length; i++) {
          const c = cps[i] as number;
          if (c < n) delta++;
          if (c === n) {
            let q = delta;
            for (let k = 36; ; k += 36) {
              const t = threshold(k, bias);
              if (q < t) break;
              out += digitChar(t + ((q - t) % (36 - t)));
              q = floor((q - t) / (36 - t));
            }
            out += digitChar(q);
            bias = adapt(delta, h + 1, h === basic);
            delta = 0;
            h++;
          }
        }
        delta++;
        n++;
      }
      return out;
    };
    const punycodeDecode = (input: string): number[] | null => {
      let basic = -1;
      for (let i = input.length - 1; i >= 0; i--) {
        if (input[i] === "-") {
          basic = i;
          break;
        }
      }
      const out = list<number>();
      for (let i = 0; i < basic; i++) {
        const c = charCodeAt(input, i) as number;
        if (c >= 0x80) return null;
        out[out.length] = c;
      }
      let n = 128;
      let i = 0;
      let bias = 72;
      for (let idx = basic > 0 ? basic + 1 : 0; idx < input.length; ) {
        const oldi = i;
        let w = 1;
        for (let k = 36; ; k += 36) {
          if (idx >= input.length) return null;
          const c = charCodeAt(input, idx++) as number;
          const digit =
            c >= 0x30 && c <= 0x39
              ? c - 22
              : c >= 0x41 && c <= 0x5a
                ? c - 0x41
                : c >= 0x61 && c <= 0x7a
                  ? c - 0x61
                  : 36;
          if (digit >= 36) return null;
          i += digit * w;
          const t = threshold(k, bias);
          if (digit < t) break;
          w *= 36 - t;
          if (i > 0x7fffffff || w > 0x7fffffff) return null;
        }
        const count = out.length + 1;
        bias = adapt(i - oldi, count, oldi === 0);
        n += floor(i / count);
        i %= count;
        if (n > 0x10ffff) return null;
        for (let j = out.length; j > i; j--) out[j] = out[j - 1] as number;
        out[i] = n;
        i++;
      }
      return out;
    };

    // ---- hosts ---------------------------------------------------------------
    const isForbiddenHost = (c: number): boolean =>
      c === 0 ||
      c === 0x09 ||
      c === 0x0a ||
      c === 0x0d ||
      c === 0x20 ||
      c === 0x23 ||
      c === 0x2f ||
      c === 0x3a ||
      c === 0x3c ||
      c === 0x3e ||
      c === 0x3f ||
      c === 0x40 ||
      c === 0x5b ||
      c === 0x5c ||
      c === 0x5d ||
      c === 0x5e ||
      c === 0x7c;
    const isForbiddenDomain = (c: number): boolean =>
      isForbiddenHost(c) || c <= 0x1f || c === 0x25 || c === 0x7f;

    const splitDots = (s: string): string[] => {
      const parts = list<string>();
      let start = 0;
      for (let i = 0; i <= s.length; i++) {
        if (i === s.length || s[i] === ".") {
          parts[parts.length] = sliceString(s, start, i) as string;
          start = i + 1;
        }
      }
      return parts;
    };
    const slice = (s: string, from: number, to?: number): string => sliceString(s, from, to);
    const startsXn = (label: string): boolean =>
      label.length >= 4 &&
      (label[0] === "x" || label[0] === "X") &&
      (label[1] === "n" || label[1] === "N") &&
      label[2] === "-" &&
      label[3] === "-";
    /** UTS #46 mapping as far as it goes without tables (see the part's TSDoc). */
    const mapDomain = (s: string): string => {
      const folded = toLowerCase(normalize(toLowerCase(s), "NFKC"));
      let out = "";
      for (let i = 0; i < folded.length; i++) {
        const ch = folded[i] as string;
        if (ch === "\u00ad") continue;
        out += ch === "\u3002" || ch === "\uff0e" || ch === "\uff61" ? "." : ch;
      }
      return out;
    };
    // UTS #46 refuses unassigned, control, private-use and surrogate code points and a label that
    // starts with a combining mark: the engine's own Unicode data (regex property escapes) says which.
    const disallowedRe = /[\p{Cn}\p{Cc}\p{Co}\p{Cs}\u{FFF9}-\u{FFFD}]|(?:^|\.)\p{M}/u;
    const hasDisallowed = (s: string): boolean => regExpExec(disallowedRe, s) !== null;
    const domainToAscii = (domain: string): string | null => {
      let ascii = true;
      for (let i = 0; i < domain.length; i++) {
        if ((charCodeAt(domain, i) as number) >= 0x80) {
          ascii = false;
          break;
        }
      }
      // An ASCII domain is only lower-cased, its `xn--` labels taken as they are (Node 24's Ada does
      // so; Node 20 and 22 check them as for a non-ASCII domain).
      if (ascii) {
        const lower = toLowerCase(domain) as string;
        return lower === "" ? null : lower;
      }
      const mapped = mapDomain(domain);
      if (hasDisallowed(mapped)) return null;
      const labels = splitDots(mapped);
      let out = "";
      for (let i = 0; i < labels.length; i++) {
        let label = labels[i] as string;
        if (startsXn(label)) {
          const decoded = punycodeDecode(slice(label, 4));
          if (decoded === null || decoded.length === 0) return null;
          let nonAscii = false;
          for (let j = 0; j < decoded.length; j++) if ((decoded[j] as number) >= 0x80) nonAscii = true;
          const text = cpString(decoded);
          if (!nonAscii || mapDomain(text) !== text || hasDisallowed(text)) return null;
        } else {
          const cps = codePoints(label);
          for (let j = 0; j < cps.length; j++) {
            if ((cps[j] as number) >= 0x80) {
              label = `xn--${punycodeEncode(cps)}`;
              break;
            }
          }
        }
        out += i === 0 ? label : `.${label}`;
      }
      return out === "" ? null : out;
    };

    const parseIpv4Number = (s: string): number => {
      if (s === "") return -1;
      let radix = 10;
      let from = 0;
      if (s.length >= 2 && s[0] === "0" && (s[1] === "x" || s[1] === "X")) {
        radix = 16;
        from = 2;
      } else if (s.length >= 2 && s[0] === "0") {
        radix = 8;
        from = 1;
      }
      let value = 0;
      for (let i = from; i < s.length; i++) {
        const d = hexValue(charCodeAt(s, i) as number);
        if (d < 0 || d >= radix) return -1;
        value = value * radix + d;
      }
      return value;
    };
    const endsInNumber = (s: string): boolean => {
      const parts = splitDots(s);
      if (parts[parts.length - 1] === "") {
        if (parts.length === 1) return false;
        parts.length--;
      }
      const last = parts[parts.length - 1] as string;
      if (last !== "") {
        let digits = true;
        for (let i = 0; i < last.length; i++) if (!isDigit(charCodeAt(last, i) as number)) digits = false;
        if (digits) return true;
      }
      return parseIpv4Number(last) >= 0;
    };
    const parseIpv4 = (s: string): string | null => {
      const parts = splitDots(s);
      if (parts[parts.length - 1] === "" && parts.length > 1) parts.length--;
      if (parts.length > 4) return null;
      const numbers = list<number>();
      for (let i = 0; i < parts.length; i++) {
        const n = parseIpv4Number(parts[i] as string);
        if (n < 0) return null;
        numbers[i] = n;
      }
      for (let i = 0; i < numbers.length - 1; i++) if ((numbers[i] as number) > 255) return null;
      const last = numbers[numbers.length - 1] as number;
      if (last >= 256 ** (5 - numbers.length)) return null;
      let ipv4 = last;
      for (let i = 0; i < numbers.length - 1; i++) ipv4 += (numbers[i] as number) * 256 ** (3 - i);
      let out = "";
      for (let i = 3; i >= 0; i--) {
        const part = floor(ipv4 / 256 ** i) % 256;
        out += i === 3 ? `${part}` : `.${part}`;
      }
      return out;
    };
    const parseIpv6 = (cps: number[]): string | null => {
      const address = [0, 0, 0, 0, 0, 0, 0, 0];
      let pieceIndex = 0;
      let compress = -1;
      let p = 0;
      const at = (i: number): number => (i < cps.length ? (cps[i] as number) : EOF);
      if (at(p) === 0x3a) {
        if (at(p + 1) !== 0x3a) return null;
        p += 2;
        pieceIndex++;
        compress = pieceIndex;
      }
      while (at(p) !== EOF) {
        if (pieceIndex === 8) return null;
        if (at(p) === 0x3a) {
          if (compress !== -1) return null;
          p++;
          pieceIndex++;
          compress = pieceIndex;
          continue;
        }
        let value = 0;
        let length = 0;
        while (length < 4 && hexValue(at(p)) >= 0) {
          value = value * 16 + hexValue(at(p));
          p++;
          length++;
        }
        if (at(p) === 0x2e) {
          if (length === 0) return null;
          p -= length;
          if (pieceIndex > 6) return null;
          let numbersSeen = 0;
          while (at(p) !== EOF) {
            let piece = -1;
            if (numbersSeen > 0) {
              if (at(p) === 0x2e && numbersSeen < 4) p++;
              else return null;
            }
            if (!isDigit(at(p))) return null;
            while (isDigit(at(p))) {
              const n = at(p) - 0x30;
              if (piece === -1) piece = n;
              else if (piece === 0) return null;
              else piece = piece * 10 + n;
              if (piece > 255) return null;
              p++;
            }
            address[pieceIndex] = (address[pieceIndex] as number) * 0x100 + piece;
            numbersSeen++;
            if (numbersSeen === 2 || numbersSeen === 4) pieceIndex++;
          }
          if (numbersSeen !== 4) return null;
          break;
        } else if (at(p) === 0x3a) {
          p++;
          if (at(p) === EOF) return null;
        } else if (at(p) !== EOF) return null;
        address[pieceIndex] = value;
        pieceIndex++;
      }
      if (compress !== -1) {
        let swaps = pieceIndex - compress;
        pieceIndex = 7;
        while (pieceIndex !== 0 && swaps > 0) {
          const tmp = address[compress + swaps - 1] as number;
          address[compress + swaps - 1] = address[pieceIndex] as number;
          address[pieceIndex] = tmp;
          pieceIndex--;
          swaps--;
        }
      } else if (pieceIndex !== 8) return null;
      // Serialise: the first longest run of two or more zero pieces becomes "::".
      let best = -1;
      let bestLength = 1;
      for (let i = 0; i < 8; ) {
        if (address[i] !== 0) {
          i++;
          continue;
        }
        let j = i;
        while (j < 8 && address[j] === 0) j++;
        if (j - i > bestLength) {
          best = i;
          bestLength = j - i;
        }
        i = j;
      }
      let out = "[";
      let ignore0 = false;
      for (let i = 0; i < 8; i++) {
        if (ignore0 && address[i] === 0) continue;
        ignore0 = false;
        if (best === i) {
          out += i === 0 ? "::" : ":";
          ignore0 = true;
          continue;
        }
        out += numberToString(address[i], 16) as string;
        if (i !== 7) out += ":";
      }
      return `${out}]`;
    };
    const parseHost = (input: string, opaque: boolean): string | null => {
      const cps = codePoints(input);
      if (cps[0] === 0x5b) {
        if (cps[cps.length - 1] !== 0x5d) return null;
        const inner = list<number>();
        for (let i = 1; i < cps.length - 1; i++) inner[inner.length] = cps[i] as number;
        return parseIpv6(inner);
      }
      if (opaque) {
        let out = "";
        for (let i = 0; i < cps.length; i++) {
          const c = cps[i] as number;
          if (isForbiddenHost(c)) return null;
          out += encodeCp(c, C0);
        }
        return out;
      }
      const ascii = domainToAscii(percentDecode(input));
      if (ascii === null) return null;
      for (let i = 0; i < ascii.length; i++)
        if (isForbiddenDomain(charCodeAt(ascii, i) as number)) return null;
      if (endsInNumber(ascii)) return parseIpv4(ascii);
      return ascii;
    };

    // ---- the basic URL parser ------------------------------------------------
    const DEFAULT_PORTS: Record<string, number | null> = setPrototypeOf(
      { ftp: 21, file: null, http: 80, https: 443, ws: 80, wss: 443 },
      null,
    );
    const isSpecialScheme = (scheme: string): boolean => DEFAULT_PORTS[scheme] !== undefined;
    const defaultPort = (scheme: string): number | null => {
      const port = DEFAULT_PORTS[scheme];
      return port === undefined ? null : port;
    };
    const copyPath = (path: string[] | string): string[] | string => {
      if (typeof path === "string") return path;
      const out = list<string>();
      for (let i = 0; i < path.length; i++) out[i] = path[i] as string;
      return out;
    };
    const isWindowsDriveLetter = (s: string, normalizedOnly: boolean): boolean =>
      s.length === 2 &&
      isAlpha(charCodeAt(s, 0) as number) &&
      (s[1] === ":" || (!normalizedOnly && s[1] === "|"));
    const startsWithDriveLetter = (cps: number[], p: number): boolean => {
      if (cps.length - p < 2) return false;
      if (!isAlpha(cps[p] as number) || (cps[p + 1] !== 0x3a && cps[p + 1] !== 0x7c)) return false;
      if (cps.length - p === 2) return true;
      const c = cps[p + 2];
      return c === 0x2f || c === 0x5c || c === 0x3f || c === 0x23;
    };
    const shortenPath = (url: UrlRecord): void => {
      const path = url.path as string[];
      if (url.scheme === "file" && path.length === 1 && isWindowsDriveLetter(path[0] as string, true)) return;
      if (path.length > 0) path.length--;
    };
    const isSingleDot = (s: string): boolean => s === "." || (s.length === 3 && (s === "%2e" || s === "%2E"));
    const isDoubleDot = (s: string): boolean => {
      const t = toLowerCase(s) as string;
      return t === ".." || t === ".%2e" || t === "%2e." || t === "%2e%2e";
    };
    const appendPath = (url: UrlRecord, segment: string): void => {
      const path = url.path as string[];
      path[path.length] = segment;
    };

    /**
     * The basic URL parser. Without `url`, returns a new record or null; with a
     * record and a state override, changes it in place and returns false when
     * the input was refused.
     */
    const basicParse = (
      raw: string,
      base: UrlRecord | null,
      given: UrlRecord | null,
      stateOverride: number,
    ): UrlRecord | null | boolean => {
      let start = 0;
      let end = raw.length;
      if (given === null) {
        while (start < end && charCodeAt(raw, start) <= 0x20) start++;
        while (end > start && charCodeAt(raw, end - 1) <= 0x20) end--;
      }
      const input = list<number>();
      for (let i = start; i < end; i++) {
        const c = charCodeAt(raw, i);
        if (c === 0x09 || c === 0x0a || c === 0x0d) continue;
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < end) {
          const d = charCodeAt(raw, i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) {
            input[input.length] = (c - 0xd800) * 0x400 + d - 0xdc00 + 0x10000;
            i++;
            continue;
          }
        }
        input[input.length] = c >= 0xd800 && c <= 0xdfff ? 0xfffd : c;
      }
      const url: UrlRecord = given ?? {
        scheme: "",
        username: "",
        password: "",
        host: null,
        port: null,
        path: list<string>(),
        query: null,
        fragment: null,
      };
      const override = stateOverride !== 0;
      let state = override ? stateOverride : SCHEME_START;
      let buffer = "";
      let bufferCount = 0;
      let atSignSeen = false;
      let insideBrackets = false;
      let passwordTokenSeen = false;
      const special = (): boolean => isSpecialScheme(url.scheme);
      const includesCredentials = (): boolean => url.username !== "" || url.password !== "";
      const done = (): UrlRecord | boolean => (override ? true : url);

      for (let p = 0; ; p++) {
        const c = p < input.length ? (input[p] as number) : EOF;
        switch (state) {
          case SCHEME_START:
            if (isAlpha(c)) {
              buffer += fromCharCode(c | 0x20);
              state = SCHEME;
            } else if (!override) {
              state = NO_SCHEME;
              p--;
            } else return false;
            break;
          case SCHEME:
            if (isAlpha(c) || isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e) {
              buffer += fromCharCode(isAlpha(c) ? c | 0x20 : c);
            } else if (c === 0x3a) {
              if (override) {
                if (special() !== isSpecialScheme(buffer)) return true;
                if ((includesCredentials() || url.port !== null) && buffer === "file") return true;
                if (url.scheme === "file" && url.host === "") return true;
              }
              url.scheme = buffer;
              if (override) {
                if (url.port === defaultPort(url.scheme)) url.port = null;
                return true;
              }
              buffer = "";
              if (url.scheme === "file") state = FILE;
              else if (special() && base !== null && base.scheme === url.scheme)
                state = SPECIAL_RELATIVE_OR_AUTHORITY;
              else if (special()) state = SPECIAL_AUTHORITY_SLASHES;
              else if (input[p + 1] === 0x2f) {
                state = PATH_OR_AUTHORITY;
                p++;
              } else {
                url.path = "";
                state = OPAQUE_PATH;
              }
            } else if (!override) {
              buffer = "";
              state = NO_SCHEME;
              p = -1;
            } else return false;
            break;
          case NO_SCHEME:
            if (base === null || (typeof base.path === "string" && c !== 0x23)) return null;
            if (typeof base.path === "string" && c === 0x23) {
              url.scheme = base.scheme;
              url.path = base.path;
              url.query = base.query;
              url.fragment = "";
              state = FRAGMENT;
            } else if (base.scheme !== "file") {
              state = RELATIVE;
              p--;
            } else {
              state = FILE;
              p--;
            }
            break;
          case SPECIAL_RELATIVE_OR_AUTHORITY:
            if (c === 0x2f && input[p + 1] === 0x2f) {
              state = SPECIAL_AUTHORITY_IGNORE_SLASHES;
              p++;
            } else {
              state = RELATIVE;
              p--;
            }
            break;
          case PATH_OR_AUTHORITY:
            if (c === 0x2f) state = AUTHORITY;
            else {
              state = PATH;
              p--;
            }
            break;
          case RELATIVE: {
            const b = base as UrlRecord;
            url.scheme = b.scheme;
            if (c === 0x2f || (special() && c === 0x5c)) state = RELATIVE_SLASH;
            else {
              url.username = b.username;
              url.password = b.password;
              url.host = b.host;
              url.port = b.port;
              url.path = copyPath(b.path);
              url.query = b.query;
              if (c === 0x3f) {
                url.query = "";
                state = QUERY;
              } else if (c === 0x23) {
                url.fragment = "";
                state = FRAGMENT;
              } else if (c !== EOF) {
                url.query = null;
                shortenPath(url);
                state = PATH;
                p--;
              }
            }
            break;
          }
          case RELATIVE_SLASH:
            if (special() && (c === 0x2f || c === 0x5c)) state = SPECIAL_AUTHORITY_IGNORE_SLASHES;
            else if (c === 0x2f) state = AUTHORITY;
            else {
              const b = base as UrlRecord;
              url.username = b.username;
              url.password = b.password;
              url.host = b.host;
              url.port = b.port;
              state = PATH;
              p--;
            }
            break;
          case SPECIAL_AUTHORITY_SLASHES:
            state = SPECIAL_AUTHORITY_IGNORE_SLASHES;
            if (c === 0x2f && input[p + 1] === 0x2f) p++;
            else p--;
            break;
          case SPECIAL_AUTHORITY_IGNORE_SLASHES:
            if (c !== 0x2f && c !== 0x5c) {
              state = AUTHORITY;
              p--;
            }
            break;
          case AUTHORITY:
            if (c === 0x40) {
              if (atSignSeen) buffer = `%40${buffer}`;
              atSignSeen = true;
              const cps = codePoints(buffer);
              for (let i = 0; i < cps.length; i++) {
                const cp = cps[i] as number;
                if (cp === 0x3a && !passwordTokenSeen) {
                  passwordTokenSeen = true;
                  continue;
                }
                const encoded = encodeCp(cp, USERINFO);
                if (passwordTokenSeen) url.password += encoded;
                else url.username += encoded;
              }
              buffer = "";
              bufferCount = 0;
            } else if (c === EOF || c === 0x2f || c === 0x3f || c === 0x23 || (special() && c === 0x5c)) {
              if (atSignSeen && buffer === "") return null;
              p -= bufferCount + 1;
              buffer = "";
              bufferCount = 0;
              state = HOST;
            } else {
              buffer += fromCodePoint(c);
              bufferCount++;
            }
            break;
          case HOST:
          case HOSTNAME:
            if (override && url.scheme === "file") {
              p--;
              state = FILE_HOST;
            } else if (c === 0x3a && !insideBrackets) {
              if (buffer === "") return override ? false : null;
              if (stateOverride === HOSTNAME) return false;
              const host = parseHost(buffer, !special());
              if (host === null) return override ? false : null;
              url.host = host;
              buffer = "";
              state = PORT;
            } else if (c === EOF || c === 0x2f || c === 0x3f || c === 0x23 || (special() && c === 0x5c)) {
              p--;
              if (special() && buffer === "") return override ? false : null;
              if (override && buffer === "" && (includesCredentials() || url.port !== null)) return false;
              const host = parseHost(buffer, !special());
              if (host === null) return override ? false : null;
              url.host = host;
              buffer = "";
              state = PATH_START;
              if (override) return true;
            } else {
              if (c === 0x5b) insideBrackets = true;
              if (c === 0x5d) insideBrackets = false;
              buffer += fromCodePoint(c);
            }
            break;
          case PORT:
            if (isDigit(c)) buffer += fromCharCode(c);
            else if (
              c === EOF ||
              c === 0x2f ||
              c === 0x3f ||
              c === 0x23 ||
              (special() && c === 0x5c) ||
              override
            ) {
              if (buffer !== "") {
                let port = 0;
                for (let i = 0; i < buffer.length; i++) {
                  port = port * 10 + ((charCodeAt(buffer, i) as number) - 0x30);
                  if (port > 65535) return override ? false : null;
                }
                url.port = port === defaultPort(url.scheme) ? null : port;
                buffer = "";
                if (override) return true;
              }
              if (override) return false;
              state = PATH_START;
              p--;
            } else return override ? false : null;
            break;
          case FILE:
            url.scheme = "file";
            url.host = "";
            if (c === 0x2f || c === 0x5c) state = FILE_SLASH;
            else if (base !== null && base.scheme === "file") {
              url.host = base.host;
              url.path = copyPath(base.path);
              url.query = base.query;
              if (c === 0x3f) {
                url.query = "";
                state = QUERY;
              } else if (c === 0x23) {
                url.fragment = "";
                state = FRAGMENT;
              } else if (c !== EOF) {
                url.query = null;
                if (!startsWithDriveLetter(input, p)) shortenPath(url);
                else url.path = list<string>();
                state = PATH;
                p--;
              }
            } else {
              state = PATH;
              p--;
            }
            break;
          case FILE_SLASH:
            if (c === 0x2f || c === 0x5c) state = FILE_HOST;
            else {
              if (base !== null && base.scheme === "file") {
                url.host = base.host;
                const first = typeof base.path === "string" ? undefined : base.path[0];
                if (
                  !startsWithDriveLetter(input, p) &&
                  first !== undefined &&
                  isWindowsDriveLetter(first, true)
                ) {
                  appendPath(url, first);
                }
              }
              state = PATH;
              p--;
            }
            break;
          case FILE_HOST:
            if (c === EOF || c === 0x2f || c === 0x5c || c === 0x3f || c === 0x23) {
              p--;
              if (!override && isWindowsDriveLetter(buffer, false)) state = PATH;
              else if (buffer === "") {
                url.host = "";
                if (override) return true;
                state = PATH_START;
              } else {
                let host = parseHost(buffer, !special());
                if (host === null) return override ? false : null;
                if (host === "localhost") host = "";
                url.host = host;
                if (override) return true;
                buffer = "";
                state = PATH_START;
              }
            } else buffer += fromCodePoint(c);
            break;
          case PATH_START:
            if (special()) {
              state = PATH;
              if (c !== 0x2f && c !== 0x5c) p--;
            } else if (!override && c === 0x3f) {
              url.query = "";
              state = QUERY;
            } else if (!override && c === 0x23) {
              url.fragment = "";
              state = FRAGMENT;
            } else if (c !== EOF) {
              state = PATH;
              if (c !== 0x2f) p--;
            } else if (override && url.host === null) appendPath(url, "");
            break;
          case PATH:
            if (
              c === EOF ||
              c === 0x2f ||
              (special() && c === 0x5c) ||
              (!override && (c === 0x3f || c === 0x23))
            ) {
              const slash = c === 0x2f || (special() && c === 0x5c);
              if (isDoubleDot(buffer)) {
                shortenPath(url);
                if (!slash) appendPath(url, "");
              } else if (isSingleDot(buffer) && !slash) appendPath(url, "");
              else if (!isSingleDot(buffer)) {
                if (
                  url.scheme === "file" &&
                  (url.path as string[]).length === 0 &&
                  isWindowsDriveLetter(buffer, false)
                ) {
                  buffer = `${buffer[0]}:`;
                }
                appendPath(url, buffer);
              }
              buffer = "";
              if (c === 0x3f) {
                url.query = "";
                state = QUERY;
              }
              if (c === 0x23) {
                url.fragment = "";
                state = FRAGMENT;
              }
            } else buffer += encodeCp(c, PATH_SET);
            break;
          case OPAQUE_PATH:
            if (c === 0x3f) {
              url.query = "";
              state = QUERY;
            } else if (c === 0x23) {
              url.fragment = "";
              state = FRAGMENT;
            } else if (c === 0x20) {
              // A space just before the query or fragment is encoded, so the path never ends in one.
              const next = input[p + 1];
              url.path += next === 0x3f || next === 0x23 ? "%20" : " ";
            } else if (c !== EOF) url.path += encodeCp(c, C0);
            break;
          case QUERY:
            if ((!override && c === 0x23) || c === EOF) {
              if (buffer !== "") {
                url.query += percentEncodeString(buffer, special() ? SPECIAL_QUERY_SET : QUERY_SET, false);
                buffer = "";
              }
              if (c === 0x23) {
                url.fragment = "";
                state = FRAGMENT;
              }
            } else buffer += fromCodePoint(c);
            break;
          case FRAGMENT:
            if (c !== EOF) url.fragment += encodeCp(c, FRAGMENT_SET);
            break;
        }
        // The standard's loop: stop once the pointer is past the end (a state may have stepped back).
        if (p >= input.length) break;
      }
      return done();
    };

    const pathString = (url: UrlRecord): string => {
      if (typeof url.path === "string") return url.path;
      let out = "";
      for (let i = 0; i < url.path.length; i++) out += `/${url.path[i]}`;
      return out;
    };
    const serialize = (url: UrlRecord, excludeFragment: boolean): string => {
      let out = `${url.scheme}:`;
      if (url.host !== null) {
        out += "//";
        if (url.username !== "" || url.password !== "") {
          out += url.username;
          if (url.password !== "") out += `:${url.password}`;
          out += "@";
        }
        out += url.host;
        if (url.port !== null) out += `:${url.port}`;
      }
      if (url.host === null && typeof url.path !== "string" && url.path.length > 1 && url.path[0] === "")
        out += "/.";
      out += pathString(url);
      if (url.query !== null) out += `?${url.query}`;
      if (!excludeFragment && url.fragment !== null) out += `#${url.fragment}`;
      return out;
    };
    const origin = (url: UrlRecord): string => {
      if (url.scheme === "blob") {
        const inner = basicParse(pathString(url), null, null, 0);
        if (
          inner !== null &&
          typeof inner === "object" &&
          (inner.scheme === "http" || inner.scheme === "https")
        ) {
          return origin(inner);
        }
        return "null";
      }
      if (url.scheme === "file" || !isSpecialScheme(url.scheme)) return "null";
      return `${url.scheme}://${url.host}${url.port === null ? "" : `:${url.port}`}`;
    };

    const formParse = (input: string): [string, string][] => {
      const out = list<[string, string]>();
      let start = 0;
      for (let i = 0; i <= input.length; i++) {
        if (i < input.length && input[i] !== "&") continue;
        if (i > start) {
          let name = "";
          let value = "";
          let seenEquals = false;
          for (let j = start; j < i; j++) {
            let ch = input[j] as string;
            if (ch === "=" && !seenEquals) {
              seenEquals = true;
              continue;
            }
            if (ch === "+") ch = " ";
            if (seenEquals) value += ch;
            else name += ch;
          }
          out[out.length] = [percentDecode(name), percentDecode(value)];
        }
        start = i + 1;
      }
      return out;
    };
    const formSerialize = (pairs: [string, string][]): string => {
      let out = "";
      for (let i = 0; i < pairs.length; i++) {
        const pair = pairs[i] as [string, string];
        if (i > 0) out += "&";
        out += `${percentEncodeString(pair[0], FORM, true)}=${percentEncodeString(pair[1], FORM, true)}`;
      }
      return out;
    };

    return {
      parse: (input, base) => basicParse(input, base, null, 0) as UrlRecord | null,
      override: (input, url, state) => basicParse(input, null, url, state) === true,
      serialize,
      origin,
      pathString,
      percentEncodeString,
      formParse,
      formSerialize,
      usv,
    };
  }

  // ---- the classes -----------------------------------------------------------
  const invalidUrl = (input: string, base?: string): TypeError => {
    const error = new TypeErrorCtor("Invalid URL");
    defineProperty(error, "code", {
      value: "ERR_INVALID_URL",
      writable: true,
      enumerable: true,
      configurable: true,
    });
    defineProperty(error, "input", { value: input, writable: true, enumerable: true, configurable: true });
    if (base !== undefined) {
      defineProperty(error, "base", { value: base, writable: true, enumerable: true, configurable: true });
    }
    return error;
  };
  const coded = (message: string, code: string): TypeError => {
    const error = new TypeErrorCtor(message);
    defineProperty(error, "code", { value: code, writable: true, enumerable: true, configurable: true });
    return error;
  };
  const missing = (name: string): TypeError =>
    coded(`The "${name}" argument must be specified`, "ERR_MISSING_ARGS");
  const urlOf = (self: unknown): UrlState => {
    const state = wmGetOf(urls, self) as UrlState | undefined;
    if (state === undefined) throw new TypeErrorCtor("Receiver must be an instance of class URL");
    return state;
  };
  const paramsOf = (self: unknown): ParamsState => {
    const state = wmGetOf(paramsStates, self) as ParamsState | undefined;
    if (state === undefined)
      throw coded('Value of "this" must be of type URLSearchParams', "ERR_INVALID_THIS");
    return state;
  };
  /** After the URL's query changed: its searchParams list follows. */
  const queryChanged = (state: UrlState): void => {
    if (state.params === null) return;
    const params = wmGetOf(paramsStates, state.params) as ParamsState;
    params.list = state.rec.query === null ? list() : P().formParse(state.rec.query);
  };
  /** After the list changed: the URL's query follows (the URLSearchParams update steps). */
  const listChanged = (params: ParamsState): void => {
    const state = params.url;
    if (state === null) return;
    const text = P().formSerialize(params.list);
    state.rec.query = text === "" ? null : text;
  };
  const parseOrNull = (url: unknown, base: unknown): UrlRecord | null => {
    const p = P();
    let baseRecord: UrlRecord | null = null;
    if (base !== undefined) {
      baseRecord = p.parse(p.usv(base), null);
      if (baseRecord === null) return null;
    }
    return p.parse(p.usv(url), baseRecord);
  };

  class URLSearchParams {
    // A rest parameter keeps `length` at 0, as WebIDL's optional argument does.
    constructor(...args: unknown[]) {
      const init = args[0];
      const p = P();
      const state: ParamsState = { list: list(), url: null };
      if (init !== undefined && init !== null && (typeof init === "object" || typeof init === "function")) {
        const method = (init as { [SymbolIterator]?: unknown })[SymbolIterator];
        if (method !== undefined && method !== null) {
          if (typeof method !== "function")
            throw coded("Query pairs must be iterable", "ERR_ARG_NOT_ITERABLE");
          const iterator = apply(method, init, []) as { next: unknown };
          const next = iterator.next;
          for (;;) {
            const step = apply(next as () => unknown, iterator, []) as { done: unknown; value: unknown };
            if (step.done) break;
            const pair = step.value;
            const items = list<string>();
            if (pair !== null && (typeof pair === "object" || typeof pair === "function")) {
              const pairMethod = (pair as { [SymbolIterator]?: unknown })[SymbolIterator];
              if (typeof pairMethod === "function") {
                const pairIterator = apply(pairMethod, pair, []) as { next: unknown };
                const pairNext = pairIterator.next;
                for (;;) {
                  const item = apply(pairNext as () => unknown, pairIterator, []) as {
                    done: unknown;
                    value: unknown;
                  };
                  if (item.done) break;
                  items[items.length] = p.usv(item.value);
                }
              } else {
                throw coded("Each query pair must be an iterable [name, value] tuple", "ERR_INVALID_TUPLE");
              }
            } else {
              throw coded("Each query pair must be an iterable [name, value] tuple", "ERR_INVALID_TUPLE");
            }
            if (items.length !== 2) {
              throw coded("Each query pair must be an iterable [name, value] tuple", "ERR_INVALID_TUPLE");
            }
            state.list[state.list.length] = [items[0] as string, items[1] as string];
          }
        } else {
          const keys = ownKeys(init as object);
          for (let i = 0; i < keys.length; i++) {
            const key = keys[i] as PropertyKey;
            if (typeof key !== "string") continue;
            const desc = getOwnPropertyDescriptor(init as object, key);
            if (desc === undefined || !desc.enumerable) continue;
            const name = p.usv(key);
            const value = p.usv((init as Record<string, unknown>)[key]);
            let found = false;
            for (let j = 0; j < state.list.length; j++) {
              const pair = state.list[j] as [string, string];
              if (pair[0] === name) {
                pair[1] = value;
                found = true;
                break;
              }
            }
            if (!found) state.list[state.list.length] = [name, value];
          }
        }
      } else if (init !== undefined) {
        // null is not an object here: WebIDL converts it to the string "null", as Node 24 does.
        let text = p.usv(init);
        if (text[0] === "?") text = sliceString(text, 1) as string;
        state.list = p.formParse(text);
      }
      wmSetOf(paramsStates, this, state);
    }
    get size(): number {
      return paramsOf(this).list.length;
    }
    append(name: unknown, value: unknown): void {
      const state = paramsOf(this);
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length < 2) throw missing(arguments.length === 0 ? "name" : "value");
      const p = P();
      state.list[state.list.length] = [p.usv(name), p.usv(value)];
      listChanged(state);
    }
    delete(name: unknown, ...rest: unknown[]): void {
      const value = rest[0];
      const state = paramsOf(this);
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length < 1) throw missing("name");
      const p = P();
      const n = p.usv(name);
      const v = value === undefined ? undefined : p.usv(value);
      const kept = list<[string, string]>();
      for (let i = 0; i < state.list.length; i++) {
        const pair = state.list[i] as [string, string];
        if (pair[0] === n && (v === undefined || pair[1] === v)) continue;
        kept[kept.length] = pair;
      }
      state.list = kept;
      listChanged(state);
    }
    get(name: unknown): string | null {
      const state = paramsOf(this);
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length < 1) throw missing("name");
      const n = P().usv(name);
      for (let i = 0; i < state.list.length; i++) {
        const pair = state.list[i] as [string, string];
        if (pair[0] === n) return pair[1];
      }
      return null;
    }
    getAll(name: unknown): string[] {
      const state = paramsOf(this);
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length < 1) throw missing("name");
      const n = P().usv(name);
      const out: string[] = [];
      let count = 0;
      for (let i = 0; i < state.list.length; i++) {
        const pair = state.list[i] as [string, string];
        if (pair[0] === n)
          defineProperty(out, count++, {
            value: pair[1],
            writable: true,
            enumerable: true,
            configurable: true,
          });
      }
      return out;
    }
    has(name: unknown, ...rest: unknown[]): boolean {
      const value = rest[0];
      const state = paramsOf(this);
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length < 1) throw missing("name");
      const p = P();
      const n = p.usv(name);
      const v = value === undefined ? undefined : p.usv(value);
      for (let i = 0; i < state.list.length; i++) {
        const pair = state.list[i] as [string, string];
        if (pair[0] === n && (v === undefined || pair[1] === v)) return true;
      }
      return false;
    }
    set(name: unknown, value: unknown): void {
      const state = paramsOf(this);
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length < 2) throw missing(arguments.length === 0 ? "name" : "value");
      const p = P();
      const n = p.usv(name);
      const v = p.usv(value);
      const kept = list<[string, string]>();
      let found = false;
      for (let i = 0; i < state.list.length; i++) {
        const pair = state.list[i] as [string, string];
        if (pair[0] === n) {
          if (found) continue;
          found = true;
          kept[kept.length] = [n, v];
        } else kept[kept.length] = pair;
      }
      if (!found) kept[kept.length] = [n, v];
      state.list = kept;
      listChanged(state);
    }
    sort(): void {
      const state = paramsOf(this);
      // Stable insertion sort by UTF-16 code units of the name (`<` on strings compares code units).
      const items = state.list;
      for (let i = 1; i < items.length; i++) {
        const pair = items[i] as [string, string];
        let j = i - 1;
        while (j >= 0 && pair[0] < (items[j] as [string, string])[0]) {
          items[j + 1] = items[j] as [string, string];
          j--;
        }
        items[j + 1] = pair;
      }
      listChanged(state);
    }
    entries(): object {
      return makeIterator(paramsOf(this), 2);
    }
    forEach(callback: unknown, ...rest: unknown[]): void {
      const thisArg = rest[0];
      const state = paramsOf(this);
      if (typeof callback !== "function") {
        throw coded('The "callback" argument must be of type function', "ERR_INVALID_ARG_TYPE");
      }
      for (let i = 0; i < state.list.length; i++) {
        const pair = state.list[i] as [string, string];
        apply(callback, thisArg, [pair[1], pair[0], this]);
      }
    }
    keys(): object {
      return makeIterator(paramsOf(this), 0);
    }
    values(): object {
      return makeIterator(paramsOf(this), 1);
    }
    toString(): string {
      return P().formSerialize(paramsOf(this).list);
    }
  }

  // The iterators: live over the list, as WebIDL's pair iterators are.
  interface IteratorState {
    params: ParamsState;
    kind: number;
    index: number;
  }
  const iterators: WeakMap<object, IteratorState> = new WeakMapCtor();
  const paramsIteratorPrototype = create(iteratorPrototype) as object;
  defineProperty(paramsIteratorPrototype, "next", {
    value: function next(this: unknown) {
      const state = wmGetOf(iterators, this) as IteratorState | undefined;
      if (state === undefined)
        throw coded('Value of "this" must be of type URLSearchParamsIterator', "ERR_INVALID_THIS");
      const items = state.params.list;
      if (state.index >= items.length) return { value: undefined, done: true };
      const pair = items[state.index++] as [string, string];
      const value = state.kind === 0 ? pair[0] : state.kind === 1 ? pair[1] : [pair[0], pair[1]];
      return { value, done: false };
    },
    writable: true,
    enumerable: true,
    configurable: true,
  });
  defineProperty(paramsIteratorPrototype, SymbolToStringTag, {
    value: "URLSearchParams Iterator",
    configurable: true,
  });
  const makeIterator = (params: ParamsState, kind: number): object => {
    const iterator = create(paramsIteratorPrototype) as object;
    wmSetOf(iterators, iterator, { params, kind, index: 0 });
    return iterator;
  };

  class URL {
    constructor(url: unknown, ...rest: unknown[]) {
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length === 0) throw missing("url");
      const base = rest[0];
      const p = P();
      const input = p.usv(url);
      let baseRecord: UrlRecord | null = null;
      let baseText: string | undefined;
      if (base !== undefined) {
        baseText = p.usv(base);
        baseRecord = p.parse(baseText, null);
        if (baseRecord === null) throw invalidUrl(input, baseText);
      }
      const rec = p.parse(input, baseRecord);
      if (rec === null) throw invalidUrl(input, baseText);
      wmSetOf(urls, this, { rec, params: null });
    }
    static canParse(url: unknown, ...rest: unknown[]): boolean {
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length === 0) throw missing("url");
      const base = rest[0];
      return parseOrNull(url, base) !== null;
    }
    static parse(url: unknown, ...rest: unknown[]): URL | null {
      // biome-ignore lint/complexity/noArguments: WebIDL throws for a missing argument, not for undefined
      if (arguments.length === 0) throw missing("url");
      const base = rest[0];
      try {
        return new URL(url, base);
      } catch {
        return null;
      }
    }
    toString(): string {
      return P().serialize(urlOf(this).rec, false);
    }
    get href(): string {
      return P().serialize(urlOf(this).rec, false);
    }
    set href(value: unknown) {
      const state = urlOf(this);
      const p = P();
      const input = p.usv(value);
      const rec = p.parse(input, null);
      if (rec === null) throw invalidUrl(input);
      state.rec = rec;
      queryChanged(state);
    }
    get origin(): string {
      return P().origin(urlOf(this).rec);
    }
    get protocol(): string {
      return `${urlOf(this).rec.scheme}:`;
    }
    set protocol(value: unknown) {
      const state = urlOf(this);
      const p = P();
      p.override(`${p.usv(value)}:`, state.rec, SCHEME_START);
    }
    get username(): string {
      return urlOf(this).rec.username;
    }
    set username(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      const text = p.usv(value);
      if (rec.host === null || rec.host === "" || rec.scheme === "file") return;
      rec.username = p.percentEncodeString(text, USERINFO, false);
    }
    get password(): string {
      return urlOf(this).rec.password;
    }
    set password(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      const text = p.usv(value);
      if (rec.host === null || rec.host === "" || rec.scheme === "file") return;
      rec.password = p.percentEncodeString(text, USERINFO, false);
    }
    get host(): string {
      const rec = urlOf(this).rec;
      if (rec.host === null) return "";
      return rec.port === null ? rec.host : `${rec.host}:${rec.port}`;
    }
    set host(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      const text = p.usv(value);
      if (typeof rec.path === "string") return;
      P().override(text, rec, HOST);
    }
    get hostname(): string {
      const host = urlOf(this).rec.host;
      return host === null ? "" : host;
    }
    set hostname(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      const text = p.usv(value);
      if (typeof rec.path === "string") return;
      P().override(text, rec, HOSTNAME);
    }
    get port(): string {
      const port = urlOf(this).rec.port;
      return port === null ? "" : `${port}`;
    }
    set port(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      const text = p.usv(value);
      if (rec.host === null || rec.host === "" || rec.scheme === "file") return;
      if (text === "") rec.port = null;
      else p.override(text, rec, PORT);
    }
    get pathname(): string {
      return P().pathString(urlOf(this).rec);
    }
    set pathname(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      const text = p.usv(value);
      if (typeof rec.path === "string") return;
      rec.path = list();
      p.override(text, rec, PATH_START);
    }
    get search(): string {
      const query = urlOf(this).rec.query;
      return query === null || query === "" ? "" : `?${query}`;
    }
    set search(value: unknown) {
      const state = urlOf(this);
      const p = P();
      let text = p.usv(value);
      const rec = state.rec;
      if (text === "") {
        rec.query = null;
      } else {
        if (text[0] === "?") text = sliceString(text, 1) as string;
        rec.query = "";
        p.override(text, rec, QUERY);
      }
      queryChanged(state);
    }
    get searchParams(): object {
      const state = urlOf(this);
      if (state.params === null) {
        const params = new URLSearchParams();
        const inner = wmGetOf(paramsStates, params) as ParamsState;
        inner.url = state;
        state.params = params;
        queryChanged(state);
      }
      return state.params;
    }
    get hash(): string {
      const fragment = urlOf(this).rec.fragment;
      return fragment === null || fragment === "" ? "" : `#${fragment}`;
    }
    set hash(value: unknown) {
      const rec = urlOf(this).rec;
      const p = P();
      let text = p.usv(value);
      if (text === "") {
        rec.fragment = null;
        return;
      }
      if (text[0] === "#") text = sliceString(text, 1) as string;
      rec.fragment = "";
      p.override(text, rec, FRAGMENT);
    }
    toJSON(): string {
      return P().serialize(urlOf(this).rec, false);
    }
  }
  // WebIDL: attributes and operations are enumerable; the classes carry their tag.
  const enumerate = (proto: object): void => {
    const keys = ownKeys(proto);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as PropertyKey;
      if (key === "constructor") continue;
      const desc = getOwnPropertyDescriptor(proto, key) as PropertyDescriptor;
      desc.enumerable = true;
      defineProperty(proto, key, desc);
    }
  };
  enumerate(URL.prototype);
  enumerate(URLSearchParams.prototype);
  defineProperty(URLSearchParams.prototype, SymbolIterator, {
    value: URLSearchParams.prototype.entries,
    writable: true,
    configurable: true,
  });
  defineProperty(URL.prototype, SymbolToStringTag, { value: "URL", configurable: true });
  defineProperty(URLSearchParams.prototype, SymbolToStringTag, {
    value: "URLSearchParams",
    configurable: true,
  });
  kit.defineGlobal("URL", URL);
  kit.defineGlobal("URLSearchParams", URLSearchParams);
}
