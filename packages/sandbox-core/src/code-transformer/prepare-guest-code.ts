import type { Program } from "acorn";
import { type WrapShift, wrapWithShift } from "../guest-script/guest-script.js";
import { detectModelCodeShape, type ModelCodeShape } from "../guest-script/normalize-model-code.js";
import { type AnalysisFinding, analyzeProgram } from "./analyze-program.js";
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

/**
 * Prepare guest code once for the whole pipeline: the CodeTransformer asks
 * for the analysis (`analyse: true`) and the facade hands its result down to
 * the engine with the options ({@link withPreparedCode}), so an execution
 * parses its code once at any size. Without `analyse`, code that cannot need
 * wrapping is not parsed at all. Nothing is kept between calls.
 */
export function prepareGuestCode(code: string, options: { analyse?: boolean } = {}): PreparedGuestCode {
  const prepared = Object.freeze(prepare(code, options.analyse === true));
  madeHere.add(prepared);
  return prepared;
}

function prepare(code: string, analyse: boolean): PreparedGuestCode {
  if (!analyse && !MAY_NEED_WRAPPING.test(code) && !MAY_HAVE_MODEL_SHAPE.test(code)) {
    return { code, source: code, async: false };
  }
  const parsed = parseGuestCode(code);
  if (!parsed.ok) {
    const shape = MAY_HAVE_MODEL_SHAPE.test(code) ? detectModelCodeShape(code) : undefined;
    return {
      code,
      source: code,
      async: false,
      syntaxError: parsed.syntaxError,
      ...(shape === undefined ? {} : { modelShape: describeShape(code, shape) }),
    };
  }
  const shape =
    parsed.sourceType === "script" && MAY_HAVE_MODEL_SHAPE.test(code)
      ? detectModelCodeShape(code, parsed.program)
      : undefined;
  const wrapped = parsed.sourceType === "script" ? wrapWithShift(code, parsed.program) : undefined;
  return {
    code,
    source: wrapped?.source ?? code,
    async: wrapped !== undefined,
    ...(wrapped === undefined ? {} : { shift: wrapped.shift }),
    program: parsed.program,
    ...(shape === undefined ? {} : { modelShape: describeShape(code, shape) }),
    sourceType: parsed.sourceType,
    ...(analyse ? { findings: analyzeProgram(parsed.program, parsed.sourceType) } : {}),
  };
}

/**
 * The key under which execution options carry code a caller already
 * prepared. Internal to the facade and the engines; not part of
 * `SandboxOptions`, and not registered (`Symbol.for`), so only this module
 * can read it.
 */
const PREPARED_CODE = Symbol("preparedCode");

/**
 * Every record {@link prepareGuestCode} made (frozen): an engine runs a
 * handed-down `source` only when this module made it from the very code it
 * was given, never a look-alike whose `source` differs from what was checked.
 */
const madeHere = new WeakSet<PreparedGuestCode>();

/**
 * `options` with `prepared` handed down to the engine, which then does not
 * parse `prepared.code` again (see {@link preparedCodeFor}). The object is a
 * copy; a symbol key is not seen by the options schema, nor sent anywhere.
 */
export function withPreparedCode<T extends object>(options: T, prepared: PreparedGuestCode): T {
  return Object.assign({}, options, { [PREPARED_CODE]: prepared });
}

/** The prepared code handed down with `options` when it was prepared from exactly `code`, else undefined. */
export function preparedCodeFor(options: unknown, code: string): PreparedGuestCode | undefined {
  if (typeof options !== "object" || options === null) return undefined;
  const prepared = (options as { [PREPARED_CODE]?: unknown })[PREPARED_CODE];
  if (typeof prepared !== "object" || prepared === null || !madeHere.has(prepared as PreparedGuestCode))
    return undefined;
  return (prepared as PreparedGuestCode).code === code ? (prepared as PreparedGuestCode) : undefined;
}

/** The reason and the 1-based line a {@link ModelCodeShape} is reported at (the first fence line, else 1). */
function describeShape(code: string, shape: ModelCodeShape): NonNullable<PreparedGuestCode["modelShape"]> {
  const line =
    shape === "markdown-fence"
      ? code.split("\n").findIndex((text) => /^ {0,3}(?:```|~~~)/.test(text)) + 1
      : 1;
  return { shape, reason: SHAPE_REASONS[shape], line: Math.max(line, 1) };
}
