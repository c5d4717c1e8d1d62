import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";

const ARGS_GLOBAL = "__suaveplanArgs";

/**
 * Turn `fn(...args)` into guest source plus a context carrying the arguments.
 * The function travels as its source text, so it closes over nothing from the
 * host; native and bound functions have no source and are refused.
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
  if (!Array.isArray(args)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid executeFunction input: args: expected an array.",
    );
  }
  let copied: unknown[];
  try {
    copied = JSON.parse(JSON.stringify(args)) as unknown[];
  } catch (error) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      `Invalid executeFunction input: args: must be JSON-safe data (${(error as Error).message}).`,
      { cause: error },
    );
  }
  return {
    code: `(${asExpression(source, fn.name)})(...${ARGS_GLOBAL})`,
    context: { [ARGS_GLOBAL]: copied },
  };
}

/** Method shorthand (`name(a) { … }`) is not an expression; wrap it in an object literal. */
function asExpression(source: string, name: string): string {
  const trimmed = source.trimStart();
  const isExpression =
    /^(async\s+)?function\b/.test(trimmed) ||
    /^(async\s*)?\(/.test(trimmed) ||
    /^(async\s+)?[A-Za-z_$][\w$]*\s*=>/.test(trimmed) ||
    /^class\b/.test(trimmed);
  if (isExpression) return source;
  return `({ ${source} })[${JSON.stringify(name)}]`;
}
