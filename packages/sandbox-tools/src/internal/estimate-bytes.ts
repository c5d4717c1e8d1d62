const { apply } = Reflect;
const { isArray } = Array;
const { isView } = ArrayBuffer;
const { keys: objectKeys, getOwnPropertyDescriptor, hasOwn, getPrototypeOf } = Object;
const mapForEach = Map.prototype.forEach;
const setForEach = Set.prototype.forEach;
const bigintToString = BigInt.prototype.toString;
const dateGetTime = Date.prototype.getTime;
const regExpSource = getOwnPropertyDescriptor(RegExp.prototype, "source")?.get;
const regExpFlags = getOwnPropertyDescriptor(RegExp.prototype, "flags")?.get;
const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get;
const typedArrayTag = getOwnPropertyDescriptor(getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag)?.get;
const charCodeAt = String.prototype.charCodeAt;
const NON_PLAIN = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/;
const dateClass = Date;
const regExpClass = RegExp;
const errorClass = Error;

/**
 * The default `measure` of the tool runner: the size, in bytes, of the value
 * as it crosses the sandbox boundary — the UTF-8 bytes of its codec text
 * (`@suaveplan/sandbox-guest`'s codec: JSON text in which what JSON cannot
 * carry is a tagged array such as `["o",[["city","Oslo"]]]` for an object).
 * Exact for strings, numbers, booleans, null, undefined, BigInt, arrays,
 * plain objects, Maps, Sets and shared references; a close estimate for
 * Dates, RegExps, Errors (stacks are not counted: the host's never cross)
 * and binary data (base64). Stops walking as soon as the count passes
 * `limit`, so a huge value costs at most about `limit` steps.
 */
export function estimateBytes(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let bytes = 0;
  const seen = new Map<object, number>();
  // A container's fixed text (brackets, commas) is counted when it is reached; its members wait here.
  const items: unknown[] = [value];
  while (items.length > 0 && bytes <= limit) {
    const item = items.pop();
    switch (typeof item) {
      case "string":
        bytes += quotedBytes(item);
        break;
      case "number":
        bytes =
          bytes +
          (Number.isNaN(item)
            ? 11 // ["n","NaN"]
            : item === Number.POSITIVE_INFINITY
              ? 16
              : item === Number.NEGATIVE_INFINITY
                ? 17
                : item === 0 && 1 / item < 0
                  ? 10
                  : String(item).length);
        break;
      case "boolean":
        bytes += item ? 4 : 5;
        break;
      case "undefined":
        bytes += 5; // ["u"]
        break;
      case "bigint":
        bytes += (apply(bigintToString, item, []) as string).length + 8; // ["b","…"]
        break;
      case "object": {
        if (item === null) {
          bytes += 4;
          break;
        }
        const index = seen.get(item);
        if (index !== undefined) {
          bytes += String(index).length + 6; // ["r",n]
          break;
        }
        seen.set(item, seen.size);
        if (isView(item)) {
          const kind =
            typedArrayTag === undefined ? undefined : (apply(typedArrayTag, item, []) as string | undefined);
          bytes += base64Bytes(item.byteLength) + (kind === undefined ? 6 : kind.length + 9);
        } else if (item instanceof ArrayBuffer && arrayBufferByteLength !== undefined) {
          bytes += base64Bytes(apply(arrayBufferByteLength, item, []) as number) + 6; // ["B","…"]
        } else if (item instanceof dateClass) {
          const time = apply(dateGetTime, item, []) as number;
          bytes += Number.isNaN(time) ? 11 : String(time).length + 6;
        } else if (item instanceof regExpClass) {
          const source = regExpSource === undefined ? "" : (apply(regExpSource, item, []) as string);
          const flags = regExpFlags === undefined ? "" : (apply(regExpFlags, item, []) as string);
          bytes += quotedBytes(source) + flags.length + 9; // ["R",source,"flags"]
        } else if (item instanceof Map) {
          const entries: unknown[] = [];
          apply(mapForEach, item, [(v: unknown, k: unknown) => entries.push(k, v)]);
          bytes += pushPairs(items, entries);
        } else if (item instanceof Set) {
          const members: unknown[] = [];
          apply(setForEach, item, [(v: unknown) => members.push(v)]);
          bytes += pushList(items, members, members.length, false, limit - bytes);
        } else if (isArray(item)) {
          bytes += pushList(items, item, item.length, true, limit - bytes);
        } else if (item instanceof errorClass) {
          // ["E",name,message,"",[props]]: the host's stacks never cross.
          const fields = item as { name?: unknown; message?: unknown };
          bytes += 13;
          bytes += quotedBytes(typeof fields.name === "string" ? fields.name : "");
          bytes += quotedBytes(typeof fields.message === "string" ? fields.message : "");
        } else {
          const keys = objectKeys(item);
          const count = keys.length;
          bytes += 8 + count * 3 + Math.max(0, count - 1);
          for (let i = count - 1; i >= 0 && bytes <= limit; i--) {
            const key = keys[i] as string;
            items.push((item as Record<string, unknown>)[key]);
            bytes += quotedBytes(key);
          }
        }
        break;
      }
      default:
        // Functions and symbols cannot cross; the codec refuses them, this only sizes.
        bytes += 8;
    }
  }
  return bytes;
}

/** Push a Map's keys and values; returns the fixed bytes of `["M",[[k,v],…]]`. */
function pushPairs(items: unknown[], entries: readonly unknown[]): number {
  const count = entries.length / 2;
  for (let i = entries.length - 2; i >= 0; i -= 2) items.push(entries[i + 1], entries[i]);
  return 8 + count * 3 + Math.max(0, count - 1);
}

/** Push an array's or Set's members; returns the fixed bytes of `["a",[…]]` (a hole is `["h"]`). */
function pushList(
  items: unknown[],
  list: ArrayLike<unknown>,
  length: number,
  holes: boolean,
  room: number,
): number {
  let bytes = 8 + Math.max(0, length - 1);
  // Past the limit on its commas alone: its members need not be walked.
  if (bytes > room) return bytes;
  for (let i = length - 1; i >= 0; i--) {
    if (holes && !hasOwn(list, i)) bytes += 5;
    else items.push((list as unknown[])[i]);
  }
  return bytes;
}

function base64Bytes(length: number): number {
  return Math.ceil(length / 3) * 4 + 2;
}

/** The UTF-8 bytes of `s` as a JSON string literal (quotes and escapes included). */
export function quotedBytes(s: string): number {
  if (!NON_PLAIN.test(s)) return s.length + 2;
  let bytes = 2;
  const length = s.length;
  for (let i = 0; i < length; i++) {
    const c = apply(charCodeAt, s, [i]) as number;
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d)
      bytes += 2;
    else if (c < 0x20) bytes += 6;
    else if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < length ? (apply(charCodeAt, s, [i + 1]) as number) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 6; // a lone surrogate is escaped as \udXXX
    } else if (c >= 0xdc00 && c <= 0xdfff) bytes += 6;
    else bytes += 3;
  }
  return bytes;
}
