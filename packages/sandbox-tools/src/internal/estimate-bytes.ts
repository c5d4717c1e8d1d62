const { apply, ownKeys } = Reflect;
const { isArray } = Array;
const { isView } = ArrayBuffer;
const { hasOwn } = Object;
const mapForEach = Map.prototype.forEach;
const setForEach = Set.prototype.forEach;
const isEnumerable = Object.prototype.propertyIsEnumerable;
const bigintToString = BigInt.prototype.toString;
const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get;
const dateClass = Date;
const regExpClass = RegExp;
const errorClass = Error;

/**
 * The default `measure` of the tool runner: an estimate, in bytes, of the
 * value's JSON text as UTF-16 (characters × 2, the unit the codec counts in).
 * It also sizes what JSON cannot carry but the codec can (BigInt, Map, Set,
 * typed arrays and ArrayBuffers as base64, Dates, RegExps, Errors); a shared
 * reference or a cycle counts once. Stops walking as soon as the estimate
 * passes `limit`, so a huge value costs at most `limit / 2` steps.
 */
export function estimateBytes(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let chars = 0;
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  const half = limit / 2;
  while (stack.length > 0 && chars <= half) {
    const item = stack.pop();
    switch (typeof item) {
      case "string":
        chars += item.length + 2;
        break;
      case "number":
      case "boolean":
      case "undefined":
        chars += 8;
        break;
      case "bigint":
        chars += (apply(bigintToString, item, []) as string).length + 8;
        break;
      case "object": {
        if (item === null) {
          chars += 4;
          break;
        }
        if (seen.has(item)) {
          chars += 8;
          break;
        }
        seen.add(item);
        chars += 2;
        if (isView(item)) chars += Math.ceil((item.byteLength * 4) / 3) + 16;
        else if (item instanceof ArrayBuffer && arrayBufferByteLength !== undefined)
          chars += Math.ceil(((apply(arrayBufferByteLength, item, []) as number) * 4) / 3) + 8;
        else if (item instanceof dateClass) chars += 24;
        else if (item instanceof regExpClass) chars += item.source.length + 16;
        else if (item instanceof Map) {
          apply(mapForEach, item, [
            (v: unknown, k: unknown) => {
              chars += 2;
              stack.push(k, v);
            },
          ]);
        } else if (item instanceof Set) {
          apply(setForEach, item, [
            (v: unknown) => {
              chars += 1;
              stack.push(v);
            },
          ]);
        } else if (isArray(item)) {
          chars += item.length;
          for (let i = item.length - 1; i >= 0 && chars <= half; i--) stack.push(item[i]);
        } else {
          if (item instanceof errorClass) {
            chars += 16;
            if (hasOwn(item, "message")) stack.push(item.message);
            if (hasOwn(item, "stack")) stack.push(item.stack);
          }
          for (const key of ownKeys(item)) {
            if (typeof key !== "string" || !apply(isEnumerable, item, [key])) continue;
            chars += key.length + 4;
            stack.push((item as Record<string, unknown>)[key]);
            if (chars > half) break;
          }
        }
        break;
      }
      default:
        // Functions and symbols cannot cross; the codec refuses them, this only sizes.
        chars += 8;
    }
  }
  return chars * 2;
}
