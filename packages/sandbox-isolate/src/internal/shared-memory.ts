import { isArrayBufferView, isMap, isNativeError, isSet, isSharedArrayBuffer } from "node:util/types";

const ObjectKeys = Object.keys;
const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const MapForEach = Map.prototype.forEach;
const SetForEach = Set.prototype.forEach;
const ReflectApply = Reflect.apply;

/**
 * True when a result copied out of the isolate still shares memory with it
 * (a `SharedArrayBuffer` or a view on one). The guest refuses these before
 * the copy, but a getter can answer that check and the copy differently, so
 * the host checks its own copy: plain data, walked without recursion.
 *
 * @internal
 */
export function containsSharedMemory(root: unknown): boolean {
  const stack: unknown[] = [root];
  const seen = new Set<object>();
  const visit = (value: unknown): void => {
    if (value !== null && typeof value === "object") stack.push(value);
  };
  while (stack.length > 0) {
    const value = stack.pop();
    if (value === null || typeof value !== "object" || seen.has(value)) continue;
    seen.add(value);
    if (isSharedArrayBuffer(value)) return true;
    if (isArrayBufferView(value)) {
      if (isSharedArrayBuffer(value.buffer)) return true;
      continue;
    }
    if (isMap(value)) {
      ReflectApply(MapForEach, value, [
        (entry: unknown, key: unknown) => {
          visit(key);
          visit(entry);
        },
      ]);
    } else if (isSet(value)) {
      ReflectApply(SetForEach, value, [visit]);
    }
    // An error's cause crosses too, though it is not enumerable.
    if (isNativeError(value)) visit(ObjectGetOwnPropertyDescriptor(value, "cause")?.value);
    const record = value as Record<string, unknown>;
    for (const key of ObjectKeys(record)) visit(record[key]);
  }
  return false;
}
