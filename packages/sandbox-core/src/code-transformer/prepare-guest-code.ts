import type { Program } from "acorn";
import { type WrapShift, wrapWithShift } from "../guest-script/guest-script.js";
import { detectModelCodeShape, type ModelCodeShape } from "../guest-script/normalize-model-code.js";
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
  /**
   * Set when the code has a shape language models send that would not yield the meant value
   * (Markdown fences, an uncalled `main`): engines fail it with
   * `SANDBOX_SYNTAX_ERROR` and this reason instead of running it. `normalizeModelCode` rewrites
   * these shapes for callers that opt in.
   */
  readonly modelShape?: { readonly shape: ModelCodeShape; readonly reason: string; readonly line: number };
}

/** What to tell the caller for each {@link ModelCodeShape}: what is wrong and the fix. */
const SHAPE_REASONS: Record<ModelCodeShape, string> = {
  "markdown-fence":
    "the code is wrapped in Markdown fences (```); send the code without them, or pass it through normalizeModelCode()",
  "uncalled-main":
    "the code declares main() but never calls it, so nothing would run; end it with `await main()` (its value is the result)",
};

/** Code that may have a model shape: a fence or a `main`. */
const MAY_HAVE_MODEL_SHAPE = /```|~~~|\bmain\b/;

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
  if (options.analyse !== true && !MAY_NEED_WRAPPING.test(code) && !MAY_HAVE_MODEL_SHAPE.test(code)) {
    prepared = { code, source: code, async: false };
  } else {
    const parsed = parseGuestCode(code);
    if (!parsed.ok) {
      const shape = MAY_HAVE_MODEL_SHAPE.test(code) ? detectModelCodeShape(code) : undefined;
      prepared = {
        code,
        source: code,
        async: false,
        syntaxError: parsed.syntaxError,
        ...(shape === undefined ? {} : { modelShape: describeShape(code, shape) }),
      };
    } else {
      const shape =
        parsed.sourceType === "script" && MAY_HAVE_MODEL_SHAPE.test(code)
          ? detectModelCodeShape(code, parsed.program)
          : undefined;
      const wrapped = parsed.sourceType === "script" ? wrapWithShift(code, parsed.program) : undefined;
      prepared = {
        code,
        source: wrapped?.source ?? code,
        async: wrapped !== undefined,
        ...(wrapped === undefined ? {} : { shift: wrapped.shift }),
        program: parsed.program,
        ...(shape === undefined ? {} : { modelShape: describeShape(code, shape) }),
        sourceType: parsed.sourceType,
        ...(options.analyse === true ? { findings: analyzeProgram(parsed.program, parsed.sourceType) } : {}),
      };
    }
  }
  if (code.length > MAX_CACHED_CODE_LENGTH) return prepared;
  cache.set(code, prepared);
  return prepared;
}

/** The reason and the 1-based line a {@link ModelCodeShape} is reported at (the first fence line, else 1). */
function describeShape(code: string, shape: ModelCodeShape): NonNullable<PreparedGuestCode["modelShape"]> {
  const line =
    shape === "markdown-fence"
      ? code.split("\n").findIndex((text) => /^ {0,3}(?:```|~~~)/.test(text)) + 1
      : 1;
  return { shape, reason: SHAPE_REASONS[shape], line: Math.max(line, 1) };
}
