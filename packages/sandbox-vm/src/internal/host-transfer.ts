/** Why a host value cannot be copied into the sandbox. */
export class NotTransferableError extends Error {
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is not transferable: ${kind}`);
    this.name = "NotTransferableError";
  }
}

/**
 * JSON text of a host value (context values, module exports), by the same
 * rules results follow: JSON semantics (`toJSON` honoured, `undefined`
 * properties dropped, non-finite numbers become `null`), but functions,
 * symbols, BigInts and cycles anywhere are refused with the path to them
 * instead of being dropped silently. Returns `undefined` for `undefined`.
 */
export function encodeHostValue(value: unknown, path: string): string | undefined {
  return encode(value, path, []);
}

function encode(value: unknown, path: string, stack: object[]): string | undefined {
  switch (typeof value) {
    case "undefined":
      return undefined;
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? JSON.stringify(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "function":
    case "symbol":
    case "bigint":
      throw new NotTransferableError(path, typeof value);
  }
  if (value === null) return "null";
  const object = value as Record<string, unknown>;
  if (stack.includes(object)) throw new NotTransferableError(path, "cyclic");
  stack.push(object);
  try {
    const toJSON = object.toJSON;
    if (typeof toJSON === "function") return encode(Reflect.apply(toJSON, object, []), path, stack);
    if (Array.isArray(object)) {
      const items = object.map((item, index) => encode(item, `${path}[${index}]`, stack) ?? "null");
      return `[${items.join(",")}]`;
    }
    const parts: string[] = [];
    for (const key of Object.keys(object)) {
      const item = encode(object[key], `${path}.${key}`, stack);
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
    }
    return `{${parts.join(",")}}`;
  } finally {
    stack.pop();
  }
}
