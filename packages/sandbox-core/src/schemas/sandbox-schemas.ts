import { z } from "zod";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "../error-codes/sandbox-codes.js";
import {
  ENGINE_NAME_PATTERN,
  type EngineLimits,
  type HostCalls,
  type LogEntry,
  MAX_TIMER_MS,
  type SandboxConfig,
  type SandboxModule,
  type SandboxOptions,
} from "../types/sandbox-types.js";
import { durationSchema, sizeSchema } from "./units.js";

const language = z.enum(["javascript", "typescript"]);
// Durations and sizes take a number (ms, bytes) or a string with its unit ("30s", "64MiB"); see units.ts.
const milliseconds = durationSchema(MAX_TIMER_MS);
const bytes = sizeSchema(Number.MAX_SAFE_INTEGER);

/** Defaults applied by {@link parseSandboxConfig}. */
export const SANDBOX_DEFAULTS: Readonly<
  Omit<SandboxConfig, "pool" | "maxExecutionsPerWindow" | "engineOptions">
> = Object.freeze({
  engine: "vm",
  timeout: 5_000,
  memoryLimit: 128 * 1024 * 1024,
  maxOutputSize: 1024 * 1024,
  maxCodeLength: 100_000,
  allowedModules: ["Math", "JSON", "Date"],
  rateLimitWindow: 60_000,
  enableAudit: true,
  language: "javascript",
});

/** Schema of `config.pool` as users write it. */
export const SandboxPoolConfigSchema = z
  .strictObject({
    minSize: z.number().int().nonnegative().default(0),
    maxSize: z.number().int().positive().default(4),
    maxExecutionsPerEngine: z.number().int().positive().default(100),
    idleTimeoutMs: milliseconds.default(30_000),
    maxQueue: z.number().int().nonnegative().default(0),
    acquireTimeoutMs: milliseconds.default(5_000),
  })
  .refine((pool) => pool.minSize <= pool.maxSize, {
    message: "minSize must not exceed maxSize",
    path: ["minSize"],
  });

/** Schema of `createSandbox(config)`: every field optional, unknown fields rejected. */
export const SandboxConfigPartialSchema = z.strictObject({
  engine: z
    .string()
    .regex(
      ENGINE_NAME_PATTERN,
      "must be an engine name: lowercase letters, digits and dashes (vm, worker, spawn, isolate, quickjs, or one you registered)",
    )
    .optional(),
  timeout: milliseconds.optional(),
  memoryLimit: bytes.optional(),
  maxOutputSize: bytes.optional(),
  maxCodeLength: z.number().int().positive().optional(),
  allowedModules: z.array(z.enum(["Math", "JSON", "Date"])).optional(),
  maxExecutionsPerWindow: z.number().int().positive().optional(),
  rateLimitWindow: milliseconds.optional(),
  enableAudit: z.boolean().optional(),
  language: language.optional(),
  pool: SandboxPoolConfigSchema.optional(),
  engineOptions: z.record(z.string(), z.unknown()).optional(),
});

/** What users may pass to `createSandbox`. */
export type SandboxConfigInput = z.input<typeof SandboxConfigPartialSchema>;

/** What an `executionId` may be: safe as a Redis key part and a BullMQ job id. */
const EXECUTION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Schema of per-execution options. */
export const SandboxOptionsSchema = z.strictObject({
  language: language.optional(),
  timeout: milliseconds.optional(),
  memoryLimit: bytes.optional(),
  maxOutputSize: bytes.optional(),
  onLog: z
    .custom<(entry: LogEntry) => void>((value) => typeof value === "function", "must be a function")
    .optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, "must be an AbortSignal").optional(),
  executionId: z
    .string()
    .regex(EXECUTION_ID, "must be 1-128 letters, digits, '_' or '-' (e.g. a UUID)")
    .optional(),
  hostCalls: z
    .custom<HostCalls>(
      (value) =>
        typeof value === "object" &&
        value !== null &&
        Array.isArray((value as HostCalls).names) &&
        (value as HostCalls).names.every((name) => typeof name === "string" && IDENTIFIER.test(name)) &&
        typeof (value as HostCalls).call === "function",
      "must be { names: identifier[], call(name, input, id) }",
    )
    .optional(),
});

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Schema of a registered module. */
export const SandboxModuleSchema = z
  .strictObject({
    name: z.string().min(1).max(128).regex(IDENTIFIER, "must be a JavaScript identifier"),
    exports: z.unknown().optional(),
    source: z.string().optional(),
    language: language.optional(),
  })
  .refine((mod) => mod.exports !== undefined || mod.source !== undefined, {
    message: "needs `exports` (plain data) or `source` (guest JavaScript)",
    path: ["exports"],
  });

/**
 * Turn a Zod failure into one readable sentence that names every offending
 * field, e.g. `timeout: Too small: expected number to be >0 (got -1)`.
 */
export function describeZodError(error: z.ZodError, root: string, input: unknown): string {
  return error.issues
    .map((issue) => {
      const field = [root, ...issue.path.map(String)].join(".");
      const got = valueAt(input, issue.path);
      const shown = got === undefined ? "" : ` (got ${preview(got)})`;
      return `${field}: ${issue.message}${shown}`;
    })
    .join("; ");
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function preview(value: unknown): string {
  if (typeof value === "function") return "a function";
  try {
    const text = JSON.stringify(value);
    if (text === undefined) return String(value);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof value;
  }
}

function parseWith<S extends z.ZodType>(
  schema: S,
  input: unknown,
  code: SandboxCode,
  root: string,
  what: string,
): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new SandboxError(code, `Invalid ${what}: ${describeZodError(parsed.error, root, input)}`, {
    details: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  });
}

/** Validate `createSandbox` input and apply defaults; throws `SANDBOX_INVALID_CONFIG`. */
export function parseSandboxConfig(input: unknown = {}): SandboxConfig {
  const partial = parseWith(
    SandboxConfigPartialSchema,
    input,
    SANDBOX_CODES.INVALID_CONFIG,
    "config",
    "sandbox config",
  );
  return {
    engine: partial.engine ?? SANDBOX_DEFAULTS.engine,
    timeout: partial.timeout ?? SANDBOX_DEFAULTS.timeout,
    memoryLimit: partial.memoryLimit ?? SANDBOX_DEFAULTS.memoryLimit,
    maxOutputSize: partial.maxOutputSize ?? SANDBOX_DEFAULTS.maxOutputSize,
    maxCodeLength: partial.maxCodeLength ?? SANDBOX_DEFAULTS.maxCodeLength,
    allowedModules: partial.allowedModules ?? [...SANDBOX_DEFAULTS.allowedModules],
    maxExecutionsPerWindow: partial.maxExecutionsPerWindow,
    rateLimitWindow: partial.rateLimitWindow ?? SANDBOX_DEFAULTS.rateLimitWindow,
    enableAudit: partial.enableAudit ?? SANDBOX_DEFAULTS.enableAudit,
    language: partial.language ?? SANDBOX_DEFAULTS.language,
    pool: partial.pool,
    engineOptions: Object.freeze({ ...(partial.engineOptions ?? {}) }),
  };
}

/** Validate per-execution options; throws `SANDBOX_INVALID_OPTIONS`. */
export function parseSandboxOptions(input: unknown = {}): SandboxOptions {
  return withoutUndefined(
    parseWith(
      SandboxOptionsSchema,
      input ?? {},
      SANDBOX_CODES.INVALID_OPTIONS,
      "options",
      "execution options",
    ),
  ) as SandboxOptions;
}

/** Validate a module before registration; throws `SANDBOX_INVALID_MODULE`. */
export function parseSandboxModule(input: unknown): SandboxModule {
  return withoutUndefined(
    parseWith(SandboxModuleSchema, input, SANDBOX_CODES.INVALID_MODULE, "module", "module"),
  ) as SandboxModule;
}

/**
 * The one parser of an engine's basic limits (`timeout`, `memoryLimit`,
 * `maxOutputSize`): unknown keys are ignored here (each engine validates its
 * own extras), bad values throw `SANDBOX_INVALID_CONFIG` naming the field,
 * missing ones take the defaults.
 */
export function parseEngineLimits(input: unknown = {}): EngineLimits {
  const raw = (input ?? {}) as Partial<Record<keyof EngineLimits, unknown>>;
  const config = parseSandboxConfig(
    withoutUndefined({
      timeout: raw.timeout,
      memoryLimit: raw.memoryLimit,
      maxOutputSize: raw.maxOutputSize,
    }),
  );
  return Object.freeze({
    timeout: config.timeout,
    memoryLimit: config.memoryLimit,
    maxOutputSize: config.maxOutputSize,
  });
}

/** A copy of `value` without its `undefined` fields. */
export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
