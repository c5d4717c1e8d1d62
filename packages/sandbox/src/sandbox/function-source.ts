import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";

const ARGS_GLOBAL = "__suaveplanArgs";

/**
 * Turn `fn(...args)` into guest source plus a context carrying the arguments.
 * The function travels as its source text, so it closes over nothing from the
 * host; native and bound functions have no source and are refused, as are
 * classes and accessors (they cannot be called as `fn(...args)`).
 *
 * `args` must be JSON-safe data: anything JSON would silently change (an
 * `undefined` argument or array element, a hole, `NaN`, `±Infinity`, a
 * function, a symbol, a `Date`, a `Map`, a class instance) or cannot encode
 * (a `BigInt`, a cycle) is refused with `SANDBOX_INVALID_OPTIONS` naming its
 * path. An object property whose value is `undefined` is dropped (reading it in
 * the guest still gives `undefined`).
 */
export function functionCallSource(
  fn: unknown,
  args: readonly unknown[],
): { code: string; context: Record<string, unknown> } {
  if (typeof fn !== "function") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      `Invalid executeFunction input: fn: expected a function, got ${typeof fn}.`,
    );
  }
  const source = Function.prototype.toString.call(fn);
  if (/\{\s*\[native code\]\s*\}\s*$/.test(source)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid executeFunction input: fn: native and bound functions have no source to send into the sandbox; pass a plain function or arrow function.",
    );
  }
  const trimmed = source.trimStart();
  if (/^class\b/.test(trimmed)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid executeFunction input: fn: a class cannot be called without `new`; pass a function that builds and returns what you need.",
    );
  }
  if (/^(get|set) /.test(fn.name) && /^(get|set)[\s[]/.test(trimmed)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid executeFunction input: fn: a getter or setter cannot be called as fn(...args); pass a plain function or method.",
    );
  }
  if (!Array.isArray(args)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid executeFunction input: args: expected an array.",
    );
  }
  let copied: unknown[];
  try {
    assertJsonSafe(args, "args", new Set(), true);
    copied = JSON.parse(JSON.stringify(args)) as unknown[];
  } catch (error) {
    const reason =
      error instanceof NotJsonSafe
        ? error.message
        : error instanceof RangeError
          ? "it is nested too deeply"
          : (error as Error).message;
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      `Invalid executeFunction input: args: must be JSON-safe data (${reason}).`,
      { cause: error },
    );
  }
  return {
    code: `(${asExpression(trimmed, source)})(...${ARGS_GLOBAL})`,
    context: { [ARGS_GLOBAL]: copied },
  };
}

class NotJsonSafe extends Error {}

/** Throw {@link NotJsonSafe} naming the first value JSON would refuse or silently change. */
function assertJsonSafe(value: unknown, path: string, ancestors: Set<object>, inArray: boolean): void {
  const refuse = (why: string): never => {
    throw new NotJsonSafe(`${path} ${why}`);
  };
  switch (typeof value) {
    case "string":
    case "boolean":
      return;
    case "number":
      if (!Number.isFinite(value)) refuse(`is ${String(value)}, which JSON turns into null`);
      return;
    case "undefined":
      if (inArray) refuse("is undefined, which JSON turns into null");
      return;
    case "bigint":
      throw new NotJsonSafe(`${path} is a bigint, which JSON cannot encode`);
    case "symbol":
    case "function":
      throw new NotJsonSafe(`${path} is a ${typeof value}, which JSON drops`);
  }
  if (value === null) return;
  const object = value as object;
  if (ancestors.has(object)) refuse("is a cycle back to one of its parents");
  ancestors.add(object);
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) {
      if (!(i in object)) throw new NotJsonSafe(`${path}[${i}] is a hole, which JSON turns into null`);
      assertJsonSafe(object[i], `${path}[${i}]`, ancestors, true);
    }
  } else {
    const proto = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      const name = (proto as { constructor?: { name?: unknown } }).constructor?.name;
      refuse(
        `is a ${typeof name === "string" && name ? name : "non-plain object"}, which JSON does not copy faithfully`,
      );
    }
    for (const [key, child] of Object.entries(object)) {
      const step = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
      assertJsonSafe(child, `${path}${step}`, ancestors, false);
    }
  }
  ancestors.delete(object);
}

/**
 * Method shorthand (`name(a) { … }`, `[key](a) { … }`) is not an expression;
 * wrap it in an object literal and take its only property.
 */
function asExpression(trimmed: string, source: string): string {
  const isExpression =
    /^(async\s+)?function\b/.test(trimmed) ||
    /^(async\s*)?\(/.test(trimmed) ||
    /^(async\s+)?[A-Za-z_$][\w$]*\s*=>/.test(trimmed);
  if (isExpression) return source;
  return `((o) => o[Reflect.ownKeys(o)[0]])({ ${source} })`;
}
