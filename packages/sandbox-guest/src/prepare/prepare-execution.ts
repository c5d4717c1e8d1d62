import { types } from "node:util";
import { preparedCodeFor, prepareGuestCode } from "@suaveplan/sandbox-core/code-transformer";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { parseSandboxOptions } from "@suaveplan/sandbox-core/schemas";
import {
  type EngineLimits,
  failure,
  type HostCalls,
  type LogEntry,
  type SandboxFailure,
  type SandboxOptions,
} from "@suaveplan/sandbox-core/types";
import { createHostCodec } from "@suaveplan/sandbox-kernel";
import { stripTypes } from "@suaveplan/sandbox-typescript";
import { described } from "../outcome/to-sandbox-result.js";
import {
  type ContextPrimitive,
  DEFAULT_MAX_CALL_BYTES,
  DEFAULT_MAX_LOG_LINES,
  DEFAULT_MAX_TIMERS,
  type ExecutionRequest,
  TIMER_CREATIONS_PER_PENDING,
  withoutCode,
} from "../request/execution-request.js";
import type { ModuleRegistry } from "./module-registry.js";
import { refuseDynamicImport } from "./refuse-dynamic-import.js";
import { isStraightLine } from "./straight-line.js";

const codec = createHostCodec();

const PRIMITIVE_TYPES: ReadonlySet<string> = new Set(["string", "number", "boolean", "undefined"]);

/** Engine-wide settings a request is built from. */
export interface RequestDefaults extends EngineLimits {
  maxLogLines?: number;
  maxTimers?: number;
  maxCallBytes?: number;
  /** The realm runs in this isolate: a context of primitives crosses by reference (see {@link ExecutionRequest.contextValues}). */
  contextByReference?: boolean;
}

/** A request, or the failure that bad input resolves. */
export type BuiltRequest =
  | {
      ok: true;
      request: ExecutionRequest;
      onLog: ((entry: LogEntry) => void) | undefined;
      memoryLimit: number;
      /** Cancels the run (`options.signal`). */
      signal: AbortSignal | undefined;
      /** Answers the guest's `tools.<name>()` calls (`options.hostCalls`). */
      hostCalls: HostCalls | undefined;
    }
  | { ok: false; result: SandboxFailure };

/**
 * Validate `execute(code, context, options)` the same way on every engine
 * and build the request. Bad input never throws: it resolves
 * `SANDBOX_INVALID_OPTIONS` naming the field and the reason.
 */
export function buildExecutionRequest(
  code: unknown,
  context: unknown,
  options: unknown,
  defaults: RequestDefaults,
  modules: ModuleRegistry,
): BuiltRequest {
  const checked = checkExecutionInput(code, context, options);
  if (!checked.ok) return checked;
  const resolved = checked.options;
  // TypeScript is erased in place (every position kept), so everything after this sees JavaScript
  // and guest errors still name the original line:column.
  let source = checked.code;
  if (resolved.language === "typescript") {
    const stripped = stripTypes(source);
    if (!stripped.ok) return { ok: false, result: stripped.result };
    source = stripped.code;
  }
  const memoryLimit = resolved.memoryLimit ?? defaults.memoryLimit;
  const contextValues =
    defaults.contextByReference === true ? primitiveEntries(context, memoryLimit) : undefined;
  const contextText = contextValues === undefined ? encodeContext(context, memoryLimit) : "";
  if (typeof contextText !== "string") return { ok: false, result: contextText };
  if (
    resolved.hostCalls !== undefined &&
    typeof context === "object" &&
    context !== null &&
    Object.hasOwn(context, "tools")
  ) {
    // The binding is frozen, so the context value would be dropped without a word.
    return {
      ok: false,
      result: failure(
        SANDBOX_CODES.INVALID_OPTIONS,
        "context.tools: the guest's tools global is the sandbox's tools and cannot be replaced by a context value; give the value another name",
      ),
    };
  }
  const maxTimers = defaults.maxTimers ?? DEFAULT_MAX_TIMERS;
  // Parsed once: by the facade, which hands its analysis down with the options, else here (analysed
  // only when the code mentions `import`, the one finding an engine needs).
  const prepared =
    preparedCodeFor(options, source) ?? prepareGuestCode(source, { analyse: source.includes("import") });
  const refusal = refuseDynamicImport(source, prepared);
  if (refusal !== undefined) return { ok: false, result: failure(SANDBOX_CODES.CODE_BLOCKED, refusal) };
  if (prepared.modelShape !== undefined) {
    // Said before running: run as written, these shapes fail with an unrelated TypeError or complete with undefined.
    const { reason, line } = prepared.modelShape;
    return {
      ok: false,
      result: failure(SANDBOX_CODES.SYNTAX_ERROR, `SyntaxError: ${reason} (line ${line}, column 1)`, {
        guestError: { name: "SyntaxError", message: reason, stack: "", line, column: 1 },
      }),
    };
  }
  const sourceModules = modules.sourceModules();
  return {
    ok: true,
    memoryLimit,
    onLog: resolved.onLog,
    signal: resolved.signal,
    hostCalls: resolved.hostCalls,
    request: {
      code: prepared.source,
      shift: prepared.shift,
      contextText,
      ...(contextValues === undefined ? {} : { contextValues }),
      modulesText: modules.modulesText(),
      sourceModules,
      timeoutMs: resolved.timeout ?? defaults.timeout,
      maxOutputSize: resolved.maxOutputSize ?? defaults.maxOutputSize,
      maxLogLines: defaults.maxLogLines ?? DEFAULT_MAX_LOG_LINES,
      maxTimers,
      maxTimerCreations: maxTimers * TIMER_CREATIONS_PER_PENDING,
      maxResultBytes: memoryLimit,
      maxCallBytes: resolved.hostCalls?.maxCallBytes ?? defaults.maxCallBytes ?? DEFAULT_MAX_CALL_BYTES,
      ...(resolved.hostCalls === undefined ? {} : { tools: [...resolved.hostCalls.names] }),
      straightLine:
        sourceModules.length === 0 &&
        isStraightLine(
          prepared.source,
          prepared.source === prepared.code && prepared.sourceType === "script"
            ? prepared.program
            : undefined,
        ),
    },
  };
}

/** Valid `execute` input, or the failure it resolves. */
export type CheckedInput =
  | { ok: true; code: string; options: SandboxOptions }
  | { ok: false; result: SandboxFailure };

/**
 * The one check of `execute(code, context, options)` arguments, used by
 * every engine and by the facade: bad input resolves `SANDBOX_INVALID_OPTIONS`
 * naming the field (it never throws). Context values are checked when they
 * are encoded.
 */
export function checkExecutionInput(code: unknown, context: unknown, options: unknown): CheckedInput {
  let resolved: SandboxOptions = {};
  // `{}` (what the facade hands an engine when no option was given) needs no schema.
  if (options !== undefined && !isEmptyObject(options)) {
    try {
      resolved = parseSandboxOptions(options);
    } catch (error) {
      return { ok: false, result: failure(SANDBOX_CODES.INVALID_OPTIONS, withoutCode(error)) };
    }
  }
  if (typeof code !== "string") {
    return {
      ok: false,
      result: failure(
        SANDBOX_CODES.INVALID_OPTIONS,
        `code: must be a string (got ${code === null ? "null" : typeof code})`,
      ),
    };
  }
  if (context !== undefined && context !== null && (typeof context !== "object" || Array.isArray(context))) {
    return { ok: false, result: failure(SANDBOX_CODES.INVALID_OPTIONS, CONTEXT_SHAPE) };
  }
  return { ok: true, code, options: resolved };
}

/** A plain object with no own string keys (a symbol key, as `withPreparedCode` adds, is no option). */
function isEmptyObject(value: unknown): boolean {
  if (typeof value !== "object" || value === null || types.isProxy(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (
    (prototype === Object.prototype || prototype === null) && Object.getOwnPropertyNames(value).length === 0
  );
}

const CONTEXT_SHAPE = "context: must be a plain object of values to copy in as globals";

/**
 * The context's entries when it is a plain, non-proxy object of enumerable
 * data properties holding strings, numbers, booleans, null or undefined, small enough that
 * the codec could not refuse it for size (its text is at most 6 characters a
 * character, 2 bytes each); otherwise undefined, and the codec decides (and
 * words any refusal).
 */
function primitiveEntries(context: unknown, maxBytes: number): [string, ContextPrimitive][] | undefined {
  if (typeof context !== "object" || context === null || types.isProxy(context)) return undefined;
  const prototype = Object.getPrototypeOf(context);
  if (prototype !== Object.prototype && prototype !== null) return undefined;
  const names = Object.getOwnPropertyNames(context);
  if (names.length === 0 || Object.getOwnPropertySymbols(context).length > 0) return undefined;
  const entries: [string, ContextPrimitive][] = [];
  let chars = 0;
  for (const name of names) {
    const descriptor = Object.getOwnPropertyDescriptor(context, name);
    if (descriptor === undefined || !descriptor.enumerable || !("value" in descriptor)) return undefined;
    const value: unknown = descriptor.value;
    // Symbols, objects and functions go to the codec; so do BigInts, whose text can be any length.
    if (value !== null && !PRIMITIVE_TYPES.has(typeof value)) return undefined;
    if (typeof value === "string") chars += value.length;
    chars += name.length + 8;
    entries.push([name, value as ContextPrimitive]);
  }
  return chars * 6 * 2 <= maxBytes ? entries : undefined;
}

function encodeContext(context: unknown, maxBytes: number): string | SandboxFailure {
  if (context === undefined || context === null) return "";
  if (Object.keys(context).length === 0) return "";
  try {
    return codec.encode(context, "context", maxBytes);
  } catch (error) {
    return contextCopyFailure(error);
  }
}

/**
 * Why `context` could not be copied into a realm, worded alike on every engine: `error` is what
 * `codec.encode(context, "context", …)` threw (an engine with its own codec passes it).
 */
export function contextCopyFailure(
  error: unknown,
  from: Pick<ReturnType<typeof createHostCodec>, "isNotTransferable"> = codec,
): SandboxFailure {
  if (from.isNotTransferable(error)) {
    return failure(
      SANDBOX_CODES.INVALID_OPTIONS,
      `${error.path}: ${described(error.what)} cannot be copied into the sandbox; pass plain data`,
    );
  }
  return failure(SANDBOX_CODES.INVALID_OPTIONS, `context: could not be copied (${withoutCode(error)})`);
}
