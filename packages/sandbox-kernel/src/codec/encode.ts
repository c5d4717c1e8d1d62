import type { NotTransferableRecord } from "../kit.js";
import type { Base64 } from "./base64.js";
import type { Intrinsics } from "./intrinsics.js";
import type { Kinds } from "./kinds.js";
import type { Paths } from "./paths.js";
import type { Uncurried } from "./shared.js";

/**
 * GUEST REALM. `encode(value, root, maxBytes)`: a value as codec text, or a frozen
 * NotTransferableRecord naming the path of what cannot cross; and `isNotTransferable`.
 */
export function makeEncode(I: Intrinsics, K: Kinds, B: Base64, P: Paths, withoutStacks: boolean) {
  const {
    MapCtor,
    TypeErrorCtor,
    Uint8ArrayCtor,
    apply,
    asUintN,
    freeze,
    getOwnPropertyDescriptor,
    hasOwn,
    isArray,
    isInteger,
    isView,
    mathCeil,
    numberIsFinite,
    numberIsNaN,
    objectKeys,
  } = I;
  const {
    ARRAY,
    BIG_SMALL,
    BUFFER,
    DATE,
    DEEP,
    ERROR,
    MAP,
    MAX_DEPTH,
    PLAIN,
    REFUSED,
    REGEXP,
    SET,
    VIEW,
    arrayBufferByteLength,
    arrayJoin,
    brand,
    charCodeAt,
    classify,
    dataViewBuffer,
    dataViewByteLength,
    dataViewByteOffset,
    dateGetTime,
    issued,
    list,
    mapEntries,
    mapGet,
    mapIteratorNext,
    mapSet,
    regExpFlags,
    regExpSource,
    setIteratorNext,
    setValues,
    typedArrayBuffer,
    typedArrayByteLength,
    typedArrayByteOffset,
    typedArrayTag,
    weakSetAdd,
    weakSetHas,
  } = K;
  const { toBase64 } = B;
  const { mapValueSegment, propertySegment, quote, text } = P;

  /** Pieces of encoded text are gathered into flat chunks of about this many code units. */
  const CHUNK = 16384;
  const empty = new Uint8ArrayCtor(0);

  const encode = (value: unknown, root: string, maxBytes: number): string => {
    if (typeof maxBytes !== "number" || numberIsNaN(maxBytes) || maxBytes < 0)
      throw new TypeErrorCtor("encode: maxBytes must be a number of bytes, 0 or more");
    /** The most UTF-16 code units the text may hold. */
    const limit = maxBytes / 2;
    const seen = new MapCtor<object, number>();
    // The text is written in flat chunks: appending small pieces to one string would build a rope
    // of millions of nodes (many times the text's size); each chunk is flattened once and kept.
    let out = "";
    let written = 0;
    const chunks = list<string>();
    let count = 0;
    let what = "";
    /** Path segments, innermost first; filled only while a refusal unwinds. */
    const segments = list<string>();

    const put = (piece: string): void => {
      out += piece;
      if (out.length > CHUNK) {
        charCodeAt(out, 0); // flattens the rope in place
        chunks[chunks.length] = out;
        written += out.length;
        out = "";
      }
    };

    const refuse = (reason: string): never => {
      what = reason;
      throw REFUSED;
    };
    const refuseSize = (): never => refuse(`larger than ${maxBytes} bytes`);
    /** Run on the way out of a refused child: remember the step that led to it. */
    const step = (error: unknown, segment: string): void => {
      if (error === REFUSED) segments[segments.length] = segment;
    };
    const remember = (o: object): void => {
      mapSet(seen, o, count);
      count++;
    };

    const string = (s: string): void => {
      if (written + out.length + s.length + 2 > limit) refuseSize();
      put(quote(s));
    };

    const bigint = (b: bigint): void => {
      const magnitude = b < 0n ? -b : b;
      if (magnitude > BIG_SMALL) {
        // Refuse before writing digits that cannot fit: b >= 2^bits implies more digits than room.
        const room = limit - (written + out.length);
        if (room < 0) refuseSize();
        if (room < 4e8) {
          const bits = mathCeil((room + 2) / 0.30102999) + 2;
          if (asUintN(bits, magnitude) !== magnitude) refuseSize();
        }
      }
      put(`["b","${b}"]`);
    };

    const bytes = (tag: string, buffer: unknown, offset: number, length: number): void => {
      if (written + out.length + tag.length + mathCeil(length / 3) * 4 + 4 > limit) refuseSize();
      const view = length === 0 ? empty : new Uint8ArrayCtor(buffer as ArrayBuffer, offset, length);
      put(`${tag}"${toBase64(view, length)}"]`);
    };

    const view = (o: object): void => {
      const kind = typedArrayTag(o) as string | undefined;
      const buffer = kind === undefined ? dataViewBuffer(o) : typedArrayBuffer(o);
      if (!brand(arrayBufferByteLength, buffer)) refuse("SharedArrayBuffer");
      remember(o);
      if (kind === undefined) {
        bytes('["V",', buffer, dataViewByteOffset(o) as number, dataViewByteLength(o) as number);
      } else {
        bytes(
          `["T","${kind}",`,
          buffer,
          typedArrayByteOffset(o) as number,
          typedArrayByteLength(o) as number,
        );
      }
    };

    const array = (o: unknown[], depth: number): void => {
      const length = o.length;
      if (typeof length !== "number" || !(length >= 0 && length <= 4294967295) || !isInteger(length))
        refuse("array with an invalid length");
      remember(o);
      put('["a",[');
      for (let i = 0; i < length; i++) {
        if (i > 0) put(",");
        try {
          if (hasOwn(o, i)) {
            node(o[i], depth + 1);
          } else {
            put('["h"]');
            if (written + out.length > limit) refuseSize();
          }
        } catch (error) {
          step(error, `[${i}]`);
          throw error;
        }
      }
      put("]]");
    };

    /**
     * Write `,[key, value]` (no comma for the first) for each own enumerable string key of `o`,
     * running an accessor's getter once; for an Error, `stack` and `message` are skipped and
     * non-enumerable own `cause` and `errors` added. Returns whether nothing was written.
     */
    const properties = (o: object, depth: number, ofError: boolean): boolean => {
      const keys = objectKeys(o);
      const keyCount = keys.length;
      let first = true;
      for (let i = 0; i < keyCount + (ofError ? 2 : 0); i++) {
        const key = i < keyCount ? (keys[i] as string) : i === keyCount ? "cause" : "errors";
        if (ofError && i < keyCount && (key === "stack" || key === "message")) continue;
        try {
          const descriptor = getOwnPropertyDescriptor(o, key);
          if (descriptor === undefined || descriptor.enumerable !== i < keyCount) continue;
          const entry = hasOwn(descriptor, "value")
            ? descriptor.value
            : descriptor.get === undefined
              ? undefined
              : apply(descriptor.get, o, []);
          if (written + out.length + key.length + 4 > limit) refuseSize();
          put(`${first ? "[" : ",["}${quote(key)},`);
          first = false;
          node(entry, depth + 1);
          put("]");
        } catch (caught) {
          step(caught, propertySegment(key));
          throw caught;
        }
      }
      return first;
    };

    const error = (o: object, depth: number): void => {
      remember(o);
      const fields = o as { name?: unknown; message?: unknown; stack?: unknown };
      const name = fields.name;
      const message = fields.message;
      // The host's own stacks carry host paths and frames: they never cross into a guest.
      const stack = withoutStacks ? "" : fields.stack;
      put('["E",');
      string(typeof name === "string" ? name : text(name));
      put(",");
      string(typeof message === "string" ? message : text(message));
      put(",");
      string(typeof stack === "string" ? stack : "");
      put(",[");
      properties(o, depth, true);
      put("]]");
    };

    const map = (o: object, depth: number): void => {
      remember(o);
      put('["M",[');
      const iterator = mapEntries(o);
      for (let i = 0; ; i++) {
        const result = mapIteratorNext(iterator);
        if (result.done === true) break;
        const key = result.value[0];
        put(i === 0 ? "[" : ",[");
        try {
          node(key, depth + 1);
        } catch (caught) {
          step(caught, `.keys()[${i}]`);
          throw caught;
        }
        put(",");
        try {
          node(result.value[1], depth + 1);
        } catch (caught) {
          step(caught, mapValueSegment(key, i));
          throw caught;
        }
        put("]");
      }
      put("]]");
    };

    const set = (o: object, depth: number): void => {
      remember(o);
      put('["S",[');
      const iterator = setValues(o);
      for (let i = 0; ; i++) {
        const result = setIteratorNext(iterator);
        if (result.done === true) break;
        if (i > 0) put(",");
        try {
          node(result.value, depth + 1);
        } catch (caught) {
          step(caught, `.values()[${i}]`);
          throw caught;
        }
      }
      put("]]");
    };

    const regExp = (o: object): void => {
      remember(o);
      let flags = "";
      const getters = regExpFlags();
      for (let i = 0; i < getters.length; i++) {
        const flag = getters[i] as [string, Uncurried];
        if (flag[1](o) === true) flags += flag[0];
      }
      put('["R",');
      string(regExpSource?.(o) as string);
      put(`,"${flags}"]`);
    };

    /** Write `v`, which sits inside `depth` arrays, objects, Maps, Sets and Errors. */
    const node = (v: unknown, depth: number): void => {
      switch (typeof v) {
        case "string":
          string(v);
          break;
        case "number":
          if (!numberIsFinite(v))
            put(numberIsNaN(v) ? '["n","NaN"]' : v > 0 ? '["n","Infinity"]' : '["n","-Infinity"]');
          else if (v === 0 && 1 / v < 0) put('["n","-0"]');
          else put(`${v}`);
          break;
        case "boolean":
          put(v ? "true" : "false");
          break;
        case "undefined":
          put('["u"]');
          break;
        case "bigint":
          bigint(v);
          break;
        case "symbol":
          refuse("symbol");
          break;
        case "function":
          refuse("function");
          break;
        default: {
          if (v === null) {
            put("null");
            break;
          }
          const o = v as object;
          const ref = mapGet(seen, o) as number | undefined;
          if (ref !== undefined) {
            put(`["r",${ref}]`);
            break;
          }
          let isList = false;
          try {
            isList = isArray(o);
          } catch {
            refuse("revoked Proxy");
          }
          const kind = isList ? ARRAY : isView(o) ? VIEW : classify(o);
          if (
            (kind === ARRAY || kind === PLAIN || kind === MAP || kind === SET || kind === ERROR) &&
            depth >= MAX_DEPTH
          )
            refuse(DEEP);
          switch (kind) {
            case ARRAY:
              array(o as unknown[], depth);
              break;
            case VIEW:
              view(o);
              break;
            case PLAIN:
              remember(o);
              put('["o",[');
              properties(o, depth, false);
              put("]]");
              break;
            case MAP:
              map(o, depth);
              break;
            case SET:
              set(o, depth);
              break;
            case ERROR:
              error(o, depth);
              break;
            case DATE: {
              remember(o);
              const time = dateGetTime(o);
              put(numberIsNaN(time) ? '["D","NaN"]' : `["D",${time}]`);
              break;
            }
            case REGEXP:
              regExp(o);
              break;
            case BUFFER:
              remember(o);
              bytes('["B",', o, 0, arrayBufferByteLength?.(o) as number);
              break;
            default:
              refuse(kind as string);
          }
        }
      }
      if (written + out.length > limit) refuseSize();
    };

    try {
      node(value, 0);
    } catch (caught) {
      if (caught !== REFUSED) throw caught;
      let path = typeof root === "string" ? root : "value";
      for (let i = segments.length - 1; i >= 0; i--) path += segments[i] as string;
      const record: NotTransferableRecord = freeze({ kind: "not-transferable", path, what });
      weakSetAdd(issued, record);
      throw record;
    }
    if (chunks.length === 0) return out;
    chunks[chunks.length] = out;
    return arrayJoin(chunks, "") as string;
  };

  const isNotTransferable = (value: unknown): value is NotTransferableRecord =>
    weakSetHas(issued, value) === true;

  return { __proto__: null, encode, isNotTransferable };
}

export type Encoder = ReturnType<typeof makeEncode>;
