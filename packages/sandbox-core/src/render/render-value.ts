import { inspect } from "node:util";

/**
 * Budgets for turning a value into text. Every budget bounds both the output
 * and the work: a graph of shared references (a 41-node DAG with 2^40 paths)
 * costs at most `maxNodes` visits, never a walk of every path.
 */
export interface RenderLimits {
  /** UTF-8 bytes of text at most, markers included. Default 65,536. */
  maxBytes?: number;
  /** Values visited at most (each object, array item, map entry and property counts one). Default 10,000. */
  maxNodes?: number;
  /** Nesting depth shown; deeper objects print as `[Object]`, `[Array]`, … (JSON: a `$cut` tag). Default 16. */
  maxDepth?: number;
  /** Characters of one string kept; the rest is cut with a marker. Default 10,000. */
  maxStringLength?: number;
  /** Items of one array, map or set shown in text, as `util.inspect`'s `maxArrayLength`. Default 100 (JSON: no per-container cap). */
  maxItems?: number;
}

/** The text of a value and whether any budget cut it. */
export interface RenderedText {
  text: string;
  truncated: boolean;
}

/** A JSON value (what `JSON.parse` returns). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A value's JSON form, its compact text, and whether any budget cut it. */
export interface RenderedJson {
  json: JsonValue;
  text: string;
  truncated: boolean;
}

/** The budgets in force when none are given. */
export const RENDER_DEFAULTS: Readonly<Required<RenderLimits>> = Object.freeze({
  maxBytes: 65_536,
  maxNodes: 10_000,
  maxDepth: 16,
  maxStringLength: 10_000,
  maxItems: 100,
});

const objectKeys = Object.keys;
const getPrototypeOf = Object.getPrototypeOf;
const isArray = Array.isArray;
const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

function resolveLimits(limits: RenderLimits | undefined): Required<RenderLimits> {
  const resolved = { ...RENDER_DEFAULTS };
  for (const key of objectKeys(RENDER_DEFAULTS) as Array<keyof RenderLimits>) {
    const given = limits?.[key];
    if (given === undefined) continue;
    if (typeof given !== "number" || !(given >= 1)) {
      throw new RangeError(`render limits: ${key} must be a number >= 1 (got ${String(given)})`);
    }
    resolved[key] = Math.floor(given);
  }
  return resolved;
}

/** Prints verbatim inside `util.inspect` output: the renderer's own markers. */
class Marker {
  constructor(readonly text: string) {}
  [inspect.custom](): string {
    return this.text;
  }
}

const more = (n: number, what: string) => `... ${n} more ${what}${n === 1 ? "" : "s"}`;

/**
 * A map, set or object with entries left out: inspects as the kept entries in
 * inspect's own notation, the true size in the header (`Map(5000)`) and
 * `... N more items` (or keys) last, as inspect writes an array it cut.
 */
class CutContainer {
  constructor(
    readonly kept: object,
    readonly left: number,
    readonly what: string,
    readonly header: string | undefined,
    budget: Budget,
  ) {
    budget.cut = true;
  }
  [inspect.custom](depth: number, options: object, inspectAgain: typeof inspect): string {
    let text = inspectAgain(this.kept, { ...options, depth });
    if (this.header !== undefined) text = text.replace(/^(Map|Set)\(\d+\)/, this.header);
    const tail = more(this.left, this.what);
    if (text.endsWith(" {}")) return `${text.slice(0, -1)} ${tail} }`;
    if (text === "{}" || text === "[Object: null prototype] {}") return `${text.slice(0, -1)} ${tail} }`;
    if (text.endsWith("\n}")) {
      const indent = /\n( +)[^\n]*\n}$/.exec(text)?.[1] ?? "  ";
      return `${text.slice(0, -2)},\n${indent}${tail}\n}`;
    }
    return `${text.slice(0, -2)}, ${tail} }`;
  }
}

/** Shared walk state: the node and byte budgets spent so far. */
class Budget {
  nodes = 0;
  bytes = 0;
  cut = false;
  constructor(readonly limits: Required<RenderLimits>) {}
  /** Spend one node (and `bytes` bytes); false when a budget is already spent. */
  take(bytes: number): boolean {
    if (this.nodes >= this.limits.maxNodes || this.bytes >= this.limits.maxBytes) {
      this.cut = true;
      return false;
    }
    this.nodes += 1;
    this.bytes += bytes;
    return true;
  }
}

function cutString(value: string, limit: number, budget: Budget): string {
  if (value.length <= limit) return value;
  budget.cut = true;
  return `${value.slice(0, limit)}... ${value.length - limit} more characters`;
}

function errorHeadline(error: Error): string {
  let name = "Error";
  let message = "";
  try {
    name = String(error.name);
    message = String(error.message);
  } catch {
    // a throwing getter: keep the defaults
  }
  return message === "" ? name : `${name}: ${message}`;
}

function isTypedArrayLike(value: object): value is ArrayBufferView {
  return ArrayBuffer.isView(value);
}

/** Cut a UTF-8 text to `maxBytes`, marker included, on a character boundary. */
function fitText(text: string, maxBytes: number): RenderedText {
  const size = byteLength(text);
  if (size <= maxBytes) return { text, truncated: false };
  const marker = (n: number) => `\n... ${n} more bytes cut`;
  const room = Math.max(0, maxBytes - byteLength(marker(size)));
  let kept = Buffer.from(text, "utf8").subarray(0, room).toString("utf8");
  if (kept.endsWith("\uFFFD")) kept = kept.slice(0, -1);
  return { text: `${kept}${marker(size - byteLength(kept))}`, truncated: true };
}

// ── text ────────────────────────────────────────────────────────────────────

/**
 * `value` as text in `util.inspect`'s notation — the notation of the
 * library's logs and of `console.log(result)`: `1n`, `NaN`, `Map(1) { 1 => 2 }`,
 * `[Error: x]`, `<ref *1> { self: [Circular *1] }`. Bounded in size and time
 * for any graph: a copy pruned to the budgets is inspected, and every cut
 * says what it left out (`... 5 more items`, `... 120 more bytes cut`).
 * Errors print as `[Name: message]` with their own properties, never with a
 * stack (a host error's stack names host files).
 */
export function renderText(value: unknown, limits?: RenderLimits): RenderedText {
  const resolved = resolveLimits(limits);
  const budget = new Budget(resolved);
  const pruned = pruneForText(value, 0, budget, new Map());
  const text = inspect(pruned, {
    depth: resolved.maxDepth,
    // Our copy holds at most maxItems items and a marker; typed arrays are cut by inspect itself.
    maxArrayLength: resolved.maxItems + 1,
    maxStringLength: resolved.maxStringLength,
    breakLength: 80,
    customInspect: true,
  });
  const fitted = fitText(text, resolved.maxBytes);
  return { text: fitted.text, truncated: fitted.truncated || budget.cut };
}

function pruneForText(value: unknown, depth: number, budget: Budget, path: Map<object, unknown>): unknown {
  if (typeof value === "string") {
    budget.bytes += Math.min(value.length, budget.limits.maxStringLength) + 2;
    if (value.length > budget.limits.maxStringLength) budget.cut = true;
    return value;
  }
  if (typeof value === "function") {
    return new Marker(`[Function: ${value.name || "(anonymous)"}]`);
  }
  if (value === null || typeof value !== "object") {
    budget.bytes += 8;
    return value;
  }
  const seen = path.get(value);
  if (seen !== undefined) return seen; // a cycle: the copy of the ancestor, so inspect says [Circular *n]
  if (depth > budget.limits.maxDepth) {
    budget.cut = true;
    // Past the depth inspect shows: a one-entry stand-in of the same kind prints as [Array], [Object], …
    // (inspect prints an empty one as [] or {} at any depth).
    return value instanceof Map
      ? new Map([[0, 0]])
      : value instanceof Set
        ? new Set([0])
        : isArray(value)
          ? [0]
          : { "...": 0 };
  }
  if (value instanceof Date || value instanceof RegExp) {
    budget.bytes += 32;
    return value;
  }
  if (isTypedArrayLike(value) || value instanceof ArrayBuffer) {
    budget.bytes += 16 + Math.min(budget.limits.maxItems, value.byteLength) * 5;
    if (value.byteLength > budget.limits.maxItems) budget.cut = true;
    return value;
  }
  const maxItems = budget.limits.maxItems;
  if (isArray(value)) {
    const copy: unknown[] = [];
    path.set(value, copy);
    const length = value.length;
    let index = 0;
    for (; index < length && index < maxItems; index += 1) {
      if (!budget.take(2)) break;
      if (index in value) copy[index] = pruneForText(value[index], depth + 1, budget, path);
      else copy.length = index + 1;
    }
    if (index < length) {
      budget.cut = true;
      copy.push(new Marker(more(length - index, "item")));
    }
    path.delete(value);
    return copy;
  }
  if (value instanceof Map) {
    const copy = new Map<unknown, unknown>();
    path.set(value, copy);
    let shown = 0;
    for (const [key, entry] of value) {
      if (shown >= maxItems || !budget.take(4)) break;
      copy.set(pruneForText(key, depth + 1, budget, path), pruneForText(entry, depth + 1, budget, path));
      shown += 1;
    }
    path.delete(value);
    return shown < value.size
      ? new CutContainer(copy, value.size - shown, "item", `Map(${value.size})`, budget)
      : copy;
  }
  if (value instanceof Set) {
    const copy = new Set<unknown>();
    path.set(value, copy);
    let shown = 0;
    for (const item of value) {
      if (shown >= maxItems || !budget.take(2)) break;
      copy.add(pruneForText(item, depth + 1, budget, path));
      shown += 1;
    }
    path.delete(value);
    return shown < value.size
      ? new CutContainer(copy, value.size - shown, "item", `Set(${value.size})`, budget)
      : copy;
  }
  const isError = value instanceof Error;
  const copy: Record<string, unknown> = isError ? (new Error() as unknown as Record<string, unknown>) : {};
  if (isError) {
    // inspect prints an error whose stack is just its headline as [Name: message]; the class name
    // comes from the prototype, so the copy keeps it.
    Object.setPrototypeOf(copy, getPrototypeOf(value));
    Object.defineProperty(copy, "stack", { value: errorHeadline(value), configurable: true, writable: true });
    Object.defineProperty(copy, "message", { value: value.message, configurable: true, writable: true });
  } else {
    const proto = getPrototypeOf(value);
    if (proto === null) Object.setPrototypeOf(copy, null);
  }
  path.set(value, copy);
  const keys = objectKeys(value);
  let index = 0;
  for (; index < keys.length; index += 1) {
    const key = keys[index] as string;
    if (!budget.take(key.length + 4)) break;
    let entry: unknown;
    try {
      entry = (value as Record<string, unknown>)[key];
    } catch {
      entry = new Marker("[Getter threw]");
    }
    copy[key] = pruneForText(entry, depth + 1, budget, path);
  }
  path.delete(value);
  return index < keys.length ? new CutContainer(copy, keys.length - index, "key", undefined, budget) : copy;
}

// ── JSON ────────────────────────────────────────────────────────────────────

/**
 * `value` as valid JSON, bounded like {@link renderText}. What JSON cannot
 * say is a single-key object whose key starts with `$` (in the manner of
 * MongoDB's Extended JSON): `{"$bigint":"1"}`, `{"$number":"NaN"}` (also
 * `"Infinity"`, `"-Infinity"`, `"-0"`), `{"$undefined":true}`,
 * `{"$date":"1970-01-01T00:00:00.000Z"}`, `{"$regexp":"/a/g"}`,
 * `{"$map":[[key, value], …]}`, `{"$set":[…]}`, `{"$error":{"name","message",…}}`,
 * `{"$Uint8Array":[…]}` (any typed array, `$ArrayBuffer` for bytes),
 * `{"$function":"name"}`, `{"$symbol":"Symbol(x)"}`, and
 * `{"$circular":"$.path.to.ancestor"}` for a cycle. A key of the value's own
 * that starts with `$` is written with one more `$` (`"$id"` → `"$$id"`), so
 * every single-`$` key is the renderer's. A cut says what it left out:
 * `{"$cut":"5 more items"}` as an array's (or map's, set's) last item,
 * `"$cut": "3 more keys"` as an object's last key, `{"$cut":"Object nested
 * deeper than 16"}` in place of a value, and a string ends `... N more characters`.
 */
export function renderJson(value: unknown, limits?: RenderLimits): RenderedJson {
  const resolved = resolveLimits(limits);
  // Leave room for the markers a cut adds on the way out.
  const reserve = Math.min(1024, Math.floor(resolved.maxBytes / 4));
  const budget = new Budget({ ...resolved, maxBytes: Math.max(1, resolved.maxBytes - reserve) });
  const json = toJson(value, 0, budget, new Map(), "$");
  const text = JSON.stringify(json);
  if (byteLength(text) > resolved.maxBytes) {
    // The walk's estimate fell short (it cannot, short of a bug): never exceed the budget.
    const replacement = { $cut: `value of ${byteLength(text)} bytes` };
    return { json: replacement, text: JSON.stringify(replacement), truncated: true };
  }
  return { json, text, truncated: budget.cut };
}

function jsonString(value: string, budget: Budget): string {
  const kept = cutString(value, budget.limits.maxStringLength, budget);
  budget.bytes += byteLength(kept) + 2 + (kept.length >> 3); // quotes, and some escaping
  return kept;
}

function tag(key: string, value: JsonValue): JsonValue {
  return { [key]: value };
}

function toJson(
  value: unknown,
  depth: number,
  budget: Budget,
  path: Map<object, string>,
  where: string,
): JsonValue {
  switch (typeof value) {
    case "string":
      return jsonString(value, budget);
    case "boolean":
      budget.bytes += 5;
      return value;
    case "number":
      budget.bytes += String(value).length + 12;
      if (Number.isNaN(value)) return tag("$number", "NaN");
      if (value === Number.POSITIVE_INFINITY) return tag("$number", "Infinity");
      if (value === Number.NEGATIVE_INFINITY) return tag("$number", "-Infinity");
      if (Object.is(value, -0)) return tag("$number", "-0");
      return value;
    case "bigint": {
      const digits = value.toString();
      budget.bytes += digits.length + 14;
      return tag("$bigint", digits);
    }
    case "undefined":
      budget.bytes += 18;
      return tag("$undefined", true);
    case "symbol":
      return tag("$symbol", jsonString(String(value), budget));
    case "function":
      return tag("$function", jsonString(value.name || "(anonymous)", budget));
  }
  if (value === null) {
    budget.bytes += 4;
    return null;
  }
  const object = value as object;
  const ancestor = path.get(object);
  if (ancestor !== undefined) return tag("$circular", jsonString(ancestor, budget));
  if (value instanceof Date) {
    budget.bytes += 40;
    return tag("$date", Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString());
  }
  if (value instanceof RegExp) return tag("$regexp", jsonString(String(value), budget));
  const kind =
    value instanceof Map ? "Map" : value instanceof Set ? "Set" : isArray(value) ? "Array" : "Object";
  if (depth > budget.limits.maxDepth) {
    budget.cut = true;
    budget.bytes += 40;
    return tag("$cut", `${kind} nested deeper than ${budget.limits.maxDepth}`);
  }
  path.set(object, where);
  try {
    if (isTypedArrayLike(object) || object instanceof ArrayBuffer) {
      const name = object instanceof ArrayBuffer ? "ArrayBuffer" : (object.constructor?.name ?? "TypedArray");
      // Only as many elements as the node budget can take are ever read.
      const view =
        object instanceof ArrayBuffer
          ? new Uint8Array(object)
          : object instanceof DataView
            ? new Uint8Array(object.buffer, object.byteOffset, object.byteLength)
            : (object as unknown as ArrayLike<unknown>);
      return tag(`$${name}`, listToJson(view, view.length, depth, budget, path, where));
    }
    if (isArray(value)) return listToJson(value, value.length, depth, budget, path, where);
    if (value instanceof Map) {
      const entries: JsonValue[] = [];
      let index = 0;
      for (const [key, entry] of value) {
        if (!budget.take(4)) break;
        entries.push([
          toJson(key, depth + 2, budget, path, `${where}.<key ${index}>`),
          toJson(entry, depth + 2, budget, path, `${where}.<value ${index}>`),
        ]);
        index += 1;
      }
      if (index < value.size) entries.push(tag("$cut", more(value.size - index, "item").slice(4)));
      return tag("$map", entries);
    }
    if (value instanceof Set) {
      const items: unknown[] = [];
      for (const item of value) {
        if (items.length >= budget.limits.maxNodes) break;
        items.push(item);
      }
      return tag("$set", listToJson(items, value.size, depth, budget, path, where));
    }
    const out: { [key: string]: JsonValue } = {};
    const keys = objectKeys(object);
    let index = 0;
    for (; index < keys.length; index += 1) {
      const key = keys[index] as string;
      if (!budget.take(byteLength(key) + 4)) break;
      let entry: unknown;
      try {
        entry = (value as Record<string, unknown>)[key];
      } catch {
        entry = tag("$cut", "getter threw");
      }
      out[key.startsWith("$") ? `$${key}` : key] = toJson(entry, depth + 1, budget, path, `${where}.${key}`);
    }
    if (index < keys.length) out.$cut = more(keys.length - index, "key").slice(4);
    if (value instanceof Error) {
      let name = "Error";
      let message = "";
      try {
        name = String(value.name);
        message = String(value.message);
      } catch {
        // keep the defaults
      }
      return tag("$error", { name: jsonString(name, budget), message: jsonString(message, budget), ...out });
    }
    return out;
  } finally {
    path.delete(object);
  }
}

function listToJson(
  items: ArrayLike<unknown>,
  length: number,
  depth: number,
  budget: Budget,
  path: Map<object, string>,
  where: string,
): JsonValue[] {
  const out: JsonValue[] = [];
  let index = 0;
  for (; index < length; index += 1) {
    if (!budget.take(1)) break;
    out.push(
      index in items
        ? toJson(items[index], depth + 1, budget, path, `${where}[${index}]`)
        : tag("$hole", true),
    );
  }
  if (index < length) out.push(tag("$cut", more(length - index, "item").slice(4)));
  return out;
}
