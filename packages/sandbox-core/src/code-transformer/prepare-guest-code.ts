import type { Program } from "acorn";
import { type WrapShift, wrapWithShift } from "../guest-script/guest-script.js";
import { type AnalysisFinding, analyzeProgram } from "./analyze-program.js";
import { LruCache, MAX_CACHED_CODE_LENGTH } from "./lru-cache.js";
import { type GuestSyntaxError, parseGuestCode } from "./parse-guest-code.js";

/** Guest code parsed once: what the CodeTransformer checks and what every engine runs. */
export interface PreparedGuestCode {
  /** The code as given. */
  readonly code: string;
  /** What an engine evaluates as a classic script (top-level `await`/`return` wrapped in an async arrow). */
  readonly source: string;
  /** True when `source` is the async wrapper (its completion value is a promise). */
  readonly async: boolean;
  /** How the wrapper moved positions (with `async`). */
  readonly shift?: WrapShift;
  /** The acorn program, when the code was parsed (always with `analyse`). */
  readonly program?: Program;
  /** How it parsed. */
  readonly sourceType?: "script" | "module";
  /** The scope-aware analysis (with `analyse`). */
  readonly findings?: readonly AnalysisFinding[];
  /** Set when acorn could not parse it (the engine still compiles it, so V8 reports the error). */
  readonly syntaxError?: GuestSyntaxError;
}

/** Code that may use top-level `await` or `return`; anything else needs no parse to run. */
const MAY_NEED_WRAPPING = /await|return/;
const CACHE_SIZE = 128;
const cache = new LruCache<string, PreparedGuestCode>(CACHE_SIZE);

/**
 * Prepare guest code once for the whole pipeline: the CodeTransformer asks
 * for the analysis (`analyse: true`), the engine asks for `source`, and the
 * second call reuses the first one's parse (results for code up to 16 KiB are
 * cached by code text, least recently used first out). Without `analyse`, code that cannot need
 * wrapping is not parsed at all.
 */
export function prepareGuestCode(code: string, options: { analyse?: boolean } = {}): PreparedGuestCode {
  const cached = cache.get(code);
  if (
    cached !== undefined &&
    (options.analyse !== true || cached.findings !== undefined || cached.syntaxError)
  ) {
    return cached;
  }
  let prepared: PreparedGuestCode;
  if (options.analyse !== true && !MAY_NEED_WRAPPING.test(code)) {
    prepared = { code, source: code, async: false };
  } else {
    const parsed = parseGuestCode(code);
    if (!parsed.ok) {
      prepared = { code, source: code, async: false, syntaxError: parsed.syntaxError };
    } else {
      const wrapped = parsed.sourceType === "script" ? wrapWithShift(code, parsed.program) : undefined;
      prepared = {
        code,
        source: wrapped?.source ?? code,
        async: wrapped !== undefined,
        ...(wrapped === undefined ? {} : { shift: wrapped.shift }),
        program: parsed.program,
        sourceType: parsed.sourceType,
        ...(options.analyse === true ? { findings: analyzeProgram(parsed.program, parsed.sourceType) } : {}),
      };
    }
  }
  if (code.length > MAX_CACHED_CODE_LENGTH) return prepared;
  cache.set(code, prepared);
  return prepared;
}
