import { createRequire } from "node:module";
import { SANDBOX_CODES, SandboxError, withoutErrorCode } from "@suaveplan/sandbox-core/error-codes";
import { failure, type SandboxFailure } from "@suaveplan/sandbox-core/types";

/** What amaro's `transformSync` throws for code it cannot strip (its swc error). */
interface StripError {
  code: "UnsupportedSyntax" | "InvalidSyntax" | string;
  message: string;
  startLine: number;
  startColumn: number;
}

type Amaro = {
  transformSync(source: string, options: { mode: "strip-only"; sourceMap?: boolean }): { code: string };
};

let amaro: Amaro | undefined;

/** amaro (Node's own type stripper) is loaded on the first TypeScript input, never for JavaScript. */
function loadAmaro(): Amaro {
  amaro ??= createRequire(import.meta.url)("amaro") as Amaro;
  return amaro;
}

/** Stripped JavaScript, or the failure a guest sees for TypeScript that cannot run. */
export type StrippedTypes = { ok: true; code: string } | { ok: false; result: SandboxFailure };

const STRIP_ONLY_HINT =
  "TypeScript input only erases types (it does not compile), so constructs that would emit code (enum, namespace, parameter properties, <T>value assertions) are refused; rewrite it without them";

/**
 * Erase the types of a TypeScript snippet in place: every type annotation,
 * interface, type alias, `as`/`satisfies`, `!` and generic argument becomes
 * whitespace, so the JavaScript that runs has every character at its original
 * line and column (a guest error's `line`/`column` point at the TypeScript).
 * Code that does not parse resolves `SANDBOX_SYNTAX_ERROR` with the position;
 * TypeScript that would need a transform (`enum`, `namespace`, parameter
 * properties, `<T>x` assertions) resolves `SANDBOX_SYNTAX_ERROR` naming the
 * construct. Never throws.
 *
 * @example
 * stripTypes("const n: number = 41; n + 1");
 * // { ok: true, code: "const n         = 41; n + 1" }
 */
export function stripTypes(code: string): StrippedTypes {
  try {
    return { ok: true, code: strip(code) };
  } catch (first) {
    let error = first;
    // Guest code may `return` at top level (it ends the run). amaro parses a module, so such code
    // is stripped inside a function opened on line 1; the output has the input's length, so the
    // code's own part is cut back out unchanged.
    if (
      isStripError(first) &&
      first.code === "InvalidSyntax" &&
      RETURN_OUTSIDE_FUNCTION.test(first.message)
    ) {
      try {
        const wrapped = strip(`${WRAP_OPEN}${code}${WRAP_CLOSE}`);
        return { ok: true, code: wrapped.slice(WRAP_OPEN.length, WRAP_OPEN.length + code.length) };
      } catch (second) {
        error =
          isStripError(second) && second.startLine === 1
            ? { ...second, startColumn: second.startColumn - WRAP_OPEN.length }
            : second;
      }
    }
    if (!isStripError(error)) throw error;
    const line = error.startLine;
    const column = error.startColumn + 1;
    const message =
      error.code === "UnsupportedSyntax"
        ? `${error.message.replace(/ in (?:type )?strip(?:-only)? mode/, "").replace(/\.$/, "")}. ${STRIP_ONLY_HINT}`
        : error.message;
    return {
      ok: false,
      result: failure(
        SANDBOX_CODES.SYNTAX_ERROR,
        `SyntaxError: ${message} (line ${line}, column ${column})`,
        {
          guestError: { name: "SyntaxError", message, stack: "", line, column },
        },
      ),
    };
  }
}

const RETURN_OUTSIDE_FUNCTION = /^Return statement is not allowed here/;
const WRAP_OPEN = "async function sandbox() {";
const WRAP_CLOSE = "\n}";

function strip(code: string): string {
  return loadAmaro().transformSync(code, { mode: "strip-only", sourceMap: false }).code;
}

function isStripError(error: unknown): error is StripError {
  if (typeof error !== "object" || error === null) return false;
  const e = error as Partial<StripError>;
  return (
    typeof e.message === "string" && typeof e.startLine === "number" && typeof e.startColumn === "number"
  );
}

/**
 * A module whose `source` is TypeScript (`language: "typescript"`) with its
 * types erased, ready to register; any other module as it is.
 * @throws SandboxError `SANDBOX_INVALID_MODULE` naming the module, the reason and the position.
 */
export function stripModuleTypes<M extends { name?: unknown; source?: unknown; language?: unknown }>(
  module: M,
): M {
  if (module === null || typeof module !== "object") return module;
  if (module.language !== "typescript" || typeof module.source !== "string") return module;
  const stripped = stripTypes(module.source);
  if (!stripped.ok) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_MODULE,
      `module ${String(module.name)}: ${withoutErrorCode(stripped.result.error)}`,
    );
  }
  const { language: _language, ...rest } = module;
  return { ...rest, source: stripped.code } as unknown as M;
}
