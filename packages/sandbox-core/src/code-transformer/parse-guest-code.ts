import { type Options, type Program, parse } from "acorn";

/** Where and why the code failed to parse. */
export interface GuestSyntaxError {
  /** Human text with the line, e.g. `SyntaxError: Unexpected token (line 3)`. */
  message: string;
  /** 1-based line. */
  line: number;
  /** 0-based column. */
  column: number;
}

/** The outcome of {@link parseGuestCode}. */
export type ParsedGuestCode =
  | { ok: true; program: Program; sourceType: "script" | "module" }
  | { ok: false; syntaxError: GuestSyntaxError };

const SCRIPT_OPTIONS: Options = {
  ecmaVersion: "latest",
  sourceType: "script",
  allowAwaitOutsideFunction: true,
  allowReturnOutsideFunction: true,
  allowHashBang: true,
};

let parses = 0;

/**
 * How many times guest code was parsed in this process ({@link parseGuestCode}
 * calls): a diagnostic, so a test can show that an execution parses its code
 * once (the facade's parse is handed down to the engine, see `withPreparedCode`).
 */
export function guestCodeParses(): number {
  return parses;
}

const MODULE_OPTIONS: Options = { ecmaVersion: "latest", sourceType: "module", allowHashBang: true };

/**
 * Parse guest code the way engines run it: as a script (top-level `await`
 * and `return` tolerated), falling back to a module. The script attempt's
 * error is the one reported when both fail.
 */
export function parseGuestCode(code: string): ParsedGuestCode {
  parses++;
  try {
    return { ok: true, program: parse(code, SCRIPT_OPTIONS), sourceType: "script" };
  } catch (scriptError) {
    try {
      return { ok: true, program: parse(code, MODULE_OPTIONS), sourceType: "module" };
    } catch {
      return { ok: false, syntaxError: describeParseError(scriptError, code) };
    }
  }
}

function describeParseError(error: unknown, code: string): GuestSyntaxError {
  const raw = error instanceof Error ? error.message : String(error);
  const loc = (error as { loc?: { line?: unknown; column?: unknown } } | null)?.loc;
  const line = typeof loc?.line === "number" ? loc.line : 1;
  const column = typeof loc?.column === "number" ? loc.column : 0;
  const reason = raw.replace(/\s*\(\d+:\d+\)$/, "") || "Invalid syntax";
  const at = Math.min(line, lineOf(code, code.length));
  return { message: `SyntaxError: ${reason} (line ${at})`, line: at, column };
}

/** 1-based line of character offset `offset` in `code`. */
export function lineOf(code: string, offset: number): number {
  let line = 1;
  const end = Math.min(offset, code.length);
  for (let i = 0; i < end; i++) if (code.charCodeAt(i) === 10) line++;
  return line;
}
