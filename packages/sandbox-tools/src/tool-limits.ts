import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { describeZodError } from "@suaveplan/sandbox-core/schemas";
import { z } from "zod";

/** Where tools or tool limits were written: `createSandbox(config)` or `execute(code, ctx, options)`. */
export type ToolsLocation = "config" | "options";

/** Per-execution tool limits as written (every field optional). */
export interface ToolLimits {
  /** Tool calls one execution may make, whatever their outcome; `0` forbids tool calls. Default 100. */
  maxToolCalls?: number | undefined;
  /** Handlers running at once; further calls wait for a free slot, in call order. Default 16. */
  maxConcurrentToolCalls?: number | undefined;
  /**
   * Largest input and largest output of one call, each, in bytes. Default 1 MiB.
   *
   * A byte is a UTF-8 byte of the value's codec text: the text that crosses
   * the sandbox boundary, which is JSON for JSON data (`"abc"` is 5 bytes,
   * `é` 2, an emoji 4) and a tagged array for the rest (an object
   * `{ a: 1 }` is `["o",[["a",1]]]`, 15 bytes; `undefined` is `["u"]`).
   * The same measure on both sides: the guest's input and the handler's output.
   */
  maxToolPayloadBytes?: number | undefined;
}

/** Tool limits with the defaults applied. */
export interface ResolvedToolLimits {
  readonly maxToolCalls: number;
  readonly maxConcurrentToolCalls: number;
  readonly maxToolPayloadBytes: number;
}

/** The defaults of {@link ToolLimits}. */
export const TOOL_LIMIT_DEFAULTS: ResolvedToolLimits = Object.freeze({
  maxToolCalls: 100,
  maxConcurrentToolCalls: 16,
  maxToolPayloadBytes: 1024 * 1024,
});

/**
 * The zod schema of {@link ToolLimits}; spread its `.shape` into a config or
 * options schema to accept the limits there.
 */
export const ToolLimitsSchema = z.object({
  maxToolCalls: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  maxConcurrentToolCalls: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
  maxToolPayloadBytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
});

/**
 * Validate tool limits and apply {@link TOOL_LIMIT_DEFAULTS}. Reads only the
 * three limit fields of `input`. Throws `SANDBOX_INVALID_CONFIG` (`where`
 * `"config"`) or `SANDBOX_INVALID_OPTIONS` (`"options"`) naming the field.
 */
export function resolveToolLimits(input: ToolLimits | undefined, where: ToolsLocation): ResolvedToolLimits {
  const picked = {
    maxToolCalls: input?.maxToolCalls,
    maxConcurrentToolCalls: input?.maxConcurrentToolCalls,
    maxToolPayloadBytes: input?.maxToolPayloadBytes,
  };
  const parsed = ToolLimitsSchema.safeParse(picked);
  if (!parsed.success) {
    const code = where === "config" ? SANDBOX_CODES.INVALID_CONFIG : SANDBOX_CODES.INVALID_OPTIONS;
    const what = where === "config" ? "sandbox config" : "execution options";
    throw new SandboxError(code, `Invalid ${what}: ${describeZodError(parsed.error, where, picked)}`, {
      details: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
    });
  }
  return Object.freeze({
    maxToolCalls: parsed.data.maxToolCalls ?? TOOL_LIMIT_DEFAULTS.maxToolCalls,
    maxConcurrentToolCalls: parsed.data.maxConcurrentToolCalls ?? TOOL_LIMIT_DEFAULTS.maxConcurrentToolCalls,
    maxToolPayloadBytes: parsed.data.maxToolPayloadBytes ?? TOOL_LIMIT_DEFAULTS.maxToolPayloadBytes,
  });
}
