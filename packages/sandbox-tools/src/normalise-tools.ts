import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { z } from "zod";
import type {
  JsonSchemaObject,
  ToolDefinition,
  ToolExecutionOptions,
  ToolSchema,
  ToolSet,
} from "./tool-definition.js";
import type { ToolsLocation } from "./tool-limits.js";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const { getPrototypeOf } = Object;
const objectPrototype = Object.prototype;

/**
 * A tool schema made ready to validate with. A zod schema validates itself; a
 * JSON Schema is copied (and frozen) and converted once, when the tools are
 * normalised, with zod's `z.fromJSONSchema`, so both kinds validate by the
 * same engine and fail with the same messages. (`z.fromJSONSchema` is marked
 * semi-experimental by zod; it refuses what it cannot honour —
 * `if`/`then`/`else`, `unevaluated*`, `dependentSchemas`, external `$ref`s —
 * so such a schema is refused here, at configuration time, rather than
 * validated loosely.) Each keeps its own defaults: a zod `z.object` strips
 * unknown keys from what the handler gets, a JSON Schema object without
 * `additionalProperties: false` keeps them.
 *
 * The AI SDK's schema objects are unwrapped: `jsonSchema(schema, { validate? })`
 * (marked with `Symbol.for("vercel.ai.schema")`) validates with its `validate`
 * when it has one and otherwise by its JSON Schema, exactly as the plain JSON
 * Schema would; either way it is declared from its JSON Schema. A lazy schema
 * (a function returning one) is called once. A Standard Schema (v1) of a
 * library other than zod validates with its own `~standard.validate`, and is
 * declared from `~standard.jsonSchema.input()` (Standard JSON Schema) when the
 * library offers it, else as `unknown`.
 */
export interface CompiledToolSchema {
  /**
   * `zod` for a zod 4 schema, `json-schema` for a JSON Schema object,
   * `ai-sdk` for the AI SDK's `jsonSchema()`, `standard-schema` for another
   * Standard Schema library.
   */
  readonly kind: "zod" | "json-schema" | "ai-sdk" | "standard-schema";
  /** The schema as the tool wrote it. */
  readonly source: ToolSchema;
  /** What validates: the zod schema itself, the one converted from the JSON Schema, or a wrapper of the library's own `validate`. */
  readonly validator: z.core.$ZodType;
  /** For every kind but `zod`: the JSON Schema the declaration is made from (frozen); `{}` when there is none. */
  readonly jsonSchema?: JsonSchemaObject | undefined;
}

/**
 * A tool's `needsApproval` as normalised: `false` when absent. A function is
 * the AI SDK's `(input, { toolCallId, messages }) => boolean | Promise<boolean>`.
 */
export type NeedsApproval =
  | boolean
  | ((input: unknown, options: { toolCallId: string; messages: readonly unknown[] }) => unknown);

/** One tool after {@link normaliseTools}: checked, with its fields read once. */
export interface NormalisedTool {
  readonly name: string;
  readonly description: string | undefined;
  readonly inputSchema: CompiledToolSchema;
  readonly outputSchema: CompiledToolSchema | undefined;
  /** The tool's `needsApproval` (the AI SDK's): `false` when absent. */
  readonly needsApproval: NeedsApproval;
  /** The tool's `execute`, as it was when normalised. */
  readonly execute: (input: unknown, options: ToolExecutionOptions) => unknown;
}

/** A checked tool set, made by {@link normaliseTools} or {@link mergeTools}; immutable. */
export interface NormalisedToolSet {
  /** The tool names, in definition order: what the guest's `tools` global offers. */
  readonly names: readonly string[];
  /** The tool called `name`, if any. */
  get(name: string): NormalisedTool | undefined;
}

const normalisedSets = new WeakSet<NormalisedToolSet>();

/** True when `value` was made by {@link normaliseTools} or {@link mergeTools}. */
export function isNormalisedToolSet(value: unknown): value is NormalisedToolSet {
  return typeof value === "object" && value !== null && normalisedSets.has(value as NormalisedToolSet);
}

function toolSet(tools: ReadonlyMap<string, NormalisedTool>): NormalisedToolSet {
  const names = Object.freeze([...tools.keys()]);
  const set: NormalisedToolSet = Object.freeze({ names, get: (name: string) => tools.get(name) });
  normalisedSets.add(set);
  return set;
}

/** The empty tool set. */
export const NO_TOOLS: NormalisedToolSet = toolSet(new Map());

/**
 * Check a tool set as written and read each tool once: every name is a
 * JavaScript identifier, every tool has an `execute` function, a string
 * `description` if any, and an `inputSchema` (and optional `outputSchema`)
 * that is a zod 4 schema or a plain JSON Schema object zod can validate by.
 * Other fields (an AI SDK tool's `type`, `providerOptions` …) are ignored.
 * `undefined` gives the empty set; a set already normalised is returned as is.
 *
 * Throws a `SandboxError` naming the tool and the field —
 * `SANDBOX_INVALID_CONFIG` for `where` `"config"` (`config.tools.getWeather.inputSchema: …`),
 * `SANDBOX_INVALID_OPTIONS` for `"options"` (per-execution tools).
 */
export function normaliseTools(
  tools: ToolSet | NormalisedToolSet | undefined,
  where: ToolsLocation = "config",
): NormalisedToolSet {
  if (tools === undefined) return NO_TOOLS;
  if (isNormalisedToolSet(tools)) return tools;
  const root = `${where}.tools`;
  const fail = (field: string, message: string, details: Record<string, unknown>): never => {
    const code = where === "config" ? SANDBOX_CODES.INVALID_CONFIG : SANDBOX_CODES.INVALID_OPTIONS;
    const what = where === "config" ? "sandbox config" : "execution options";
    throw new SandboxError(code, `Invalid ${what}: ${field}: ${message}`, { details: { field, ...details } });
  };
  if (typeof tools !== "object" || tools === null || Array.isArray(tools)) {
    return fail(root, `must be an object of tool definitions by name (got ${kindOf(tools)})`, {});
  }
  const byName = new Map<string, NormalisedTool>();
  for (const name of Object.keys(tools)) {
    const at = IDENTIFIER.test(name) ? `${root}.${name}` : `${root}[${JSON.stringify(name)}]`;
    if (!IDENTIFIER.test(name) || name === "__proto__") {
      fail(
        at,
        "a tool name must be a JavaScript identifier (letters, digits, _ and $, not starting with a digit; not __proto__), as the guest calls it as tools.<name>",
        { tool: name },
      );
    }
    const definition = (tools as Record<string, unknown>)[name];
    if (typeof definition !== "object" || definition === null) {
      fail(
        at,
        `must be a tool definition { description?, inputSchema, outputSchema?, execute } (got ${kindOf(definition)})`,
        {
          tool: name,
        },
      );
    }
    const { description, inputSchema, outputSchema, execute, needsApproval } =
      definition as Partial<ToolDefinition>;
    if (
      needsApproval !== undefined &&
      typeof needsApproval !== "boolean" &&
      typeof needsApproval !== "function"
    ) {
      fail(
        `${at}.needsApproval`,
        `must be a boolean or a function (input, { toolCallId, messages }) => boolean (got ${kindOf(needsApproval)})`,
        { tool: name },
      );
    }
    const text = describedAs(description, (message) => fail(`${at}.description`, message, { tool: name }));
    if (typeof execute !== "function") {
      fail(
        `${at}.execute`,
        `must be a function (input, { abortSignal, toolCallId }) => output (got ${kindOf(execute)})`,
        {
          tool: name,
        },
      );
    }
    const compile = (schema: unknown, field: "inputSchema" | "outputSchema"): CompiledToolSchema => {
      const problem = { tool: name };
      const compiled = compileSchema(schema);
      if (typeof compiled === "string") return fail(`${at}.${field}`, compiled, problem);
      return compiled;
    };
    byName.set(
      name,
      Object.freeze({
        name,
        description: text,
        inputSchema: compile(inputSchema, "inputSchema"),
        outputSchema: outputSchema === undefined ? undefined : compile(outputSchema, "outputSchema"),
        needsApproval: (needsApproval ?? false) as NeedsApproval,
        execute: execute as NormalisedTool["execute"],
      }),
    );
  }
  return toolSet(byName);
}

/**
 * A tool's description as text. The AI SDK also takes a function of the
 * call's `{ context }`; a sandboxed call has no AI SDK context, so it is asked
 * once, here, with `context: undefined`.
 */
function describedAs(description: unknown, fail: (message: string) => never): string | undefined {
  if (description === undefined || typeof description === "string") return description;
  if (typeof description !== "function") {
    return fail(`must be a string or a function ({ context }) => string (got ${kindOf(description)})`);
  }
  let text: unknown;
  try {
    text = (description as (options: { context: unknown }) => unknown)({ context: undefined });
  } catch (error) {
    return fail(
      `the description function threw when called with { context: undefined } (${error instanceof Error ? error.message : kindOf(error)}); a sandboxed call has no AI SDK context`,
    );
  }
  if (typeof text !== "string") {
    return fail(`the description function must return a string (got ${kindOf(text)})`);
  }
  return text;
}

/**
 * One tool set from several, later sets winning by name (sandbox-level tools
 * first, then per-execution tools). A name keeps the position of its first
 * definition. Each argument is a normalised set, or `undefined` for none.
 */
export function mergeTools(...sets: ReadonlyArray<NormalisedToolSet | undefined>): NormalisedToolSet {
  const present = sets.filter((set): set is NormalisedToolSet => set !== undefined && set.names.length > 0);
  if (present.length === 0) return NO_TOOLS;
  if (present.length === 1) return present[0] as NormalisedToolSet;
  const merged = new Map<string, NormalisedTool>();
  for (const set of present) {
    if (!isNormalisedToolSet(set)) {
      throw new TypeError("mergeTools: every argument must come from normaliseTools (or be undefined)");
    }
    for (const name of set.names) merged.set(name, set.get(name) as NormalisedTool);
  }
  return toolSet(merged);
}

const AI_SDK_SCHEMA = Symbol.for("vercel.ai.schema");
const EMPTY_SCHEMA: JsonSchemaObject = Object.freeze({});

/** The compiled schema, or why `schema` is not one we accept. */
function compileSchema(schema: unknown): CompiledToolSchema | string {
  // The AI SDK's lazy schema: a function returning the schema, called once.
  if (typeof schema === "function") {
    let made: unknown;
    try {
      made = (schema as () => unknown)();
    } catch (error) {
      return `is a function (a lazy schema) that threw: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (typeof made !== "object" || made === null || typeof made === "function") {
      return `is a function (a lazy schema) that returned ${kindOf(made)}; it must return a schema`;
    }
    return compileSchema(made);
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return `must be a zod 4 schema, a JSON Schema object, the AI SDK's jsonSchema() or a Standard Schema (got ${kindOf(schema)})`;
  }
  if ("_zod" in schema) {
    return Object.freeze({
      kind: "zod",
      source: schema as z.core.$ZodType,
      validator: schema as z.core.$ZodType,
    });
  }
  if ("_def" in schema && "safeParse" in schema) {
    return 'is a zod 3 schema; use zod 4 (zod@^4: `import { z } from "zod"`) or a JSON Schema object';
  }
  if ((schema as Record<PropertyKey, unknown>)[AI_SDK_SCHEMA] === true) return compileAiSdkSchema(schema);
  if ("~standard" in schema) return compileStandardSchema(schema);
  const proto = getPrototypeOf(schema);
  if (proto !== objectPrototype && proto !== null) {
    return "must be a zod 4 schema or a plain JSON Schema object (got an instance of a class)";
  }
  const compiled = compileJsonSchema(schema);
  if (typeof compiled === "string") return compiled;
  return Object.freeze({
    kind: "json-schema",
    source: compiled.copy,
    validator: compiled.validator,
    jsonSchema: compiled.copy,
  });
}

function compileJsonSchema(schema: object): { copy: JsonSchemaObject; validator: z.core.$ZodType } | string {
  // A frozen copy: what validates and what is declared cannot change after normalising.
  let copy: JsonSchemaObject;
  try {
    copy = deepFreeze(structuredClone(schema) as JsonSchemaObject);
  } catch {
    return "must be a zod 4 schema or a JSON Schema object of plain data (it holds a function or another value that cannot be copied)";
  }
  try {
    const validator = z.fromJSONSchema(copy as z.core.JSONSchema.JSONSchema);
    return { copy, validator };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `is not a JSON Schema zod can validate with: ${reason}`;
  }
}

/** The AI SDK's `jsonSchema(schema, { validate? })`: `{ [Symbol.for("vercel.ai.schema")]: true, jsonSchema, validate? }`. */
function compileAiSdkSchema(schema: object): CompiledToolSchema | string {
  let json: unknown;
  try {
    json = (schema as { jsonSchema?: unknown }).jsonSchema;
  } catch (error) {
    return `is an AI SDK schema whose jsonSchema threw: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return `is an AI SDK schema whose jsonSchema is not a JSON Schema object (got ${kindOf(json)})`;
  }
  const compiled = compileJsonSchema(json);
  if (typeof compiled === "string")
    return `is an AI SDK jsonSchema() whose JSON Schema ${compiled.replace(/^(is|must be) /, "$1 ")}`;
  const { validate } = schema as { validate?: unknown };
  if (validate !== undefined && typeof validate !== "function") {
    return `is an AI SDK schema whose validate is not a function (got ${kindOf(validate)})`;
  }
  const validator =
    validate === undefined
      ? compiled.validator
      : wrapValidate(async (value) => {
          const result = (await (validate as (v: unknown) => unknown)(value)) as
            | { success: true; value: unknown }
            | { success: false; error: unknown };
          if (result?.success === true) return { value: result.value };
          return { issues: issuesOfError(result?.error) };
        });
  return Object.freeze({
    kind: "ai-sdk",
    source: schema as ToolSchema,
    validator,
    jsonSchema: compiled.copy,
  });
}

/** A Standard Schema v1 (`~standard.validate`), declared by its Standard JSON Schema when it has one. */
function compileStandardSchema(schema: object): CompiledToolSchema | string {
  const standard = (schema as { "~standard"?: unknown })["~standard"];
  const props = standard as { version?: unknown; validate?: unknown; jsonSchema?: unknown; vendor?: unknown };
  if (
    typeof standard !== "object" ||
    standard === null ||
    props.version !== 1 ||
    typeof props.validate !== "function"
  ) {
    return "is a Standard Schema but not version 1 with a ~standard.validate function; use a zod 4 schema, a JSON Schema object or a Standard Schema v1";
  }
  let jsonSchema = EMPTY_SCHEMA;
  const converter = props.jsonSchema as { input?: unknown } | undefined;
  if (typeof converter === "object" && converter !== null && typeof converter.input === "function") {
    for (const target of ["draft-2020-12", "draft-07"]) {
      try {
        const made = (converter.input as (o: { target: string }) => unknown)({ target });
        if (typeof made === "object" && made !== null && !Array.isArray(made)) {
          jsonSchema = deepFreeze(structuredClone(made) as JsonSchemaObject);
          break;
        }
      } catch {
        // This target is not offered; try the next, else declare `unknown`.
      }
    }
  }
  const validate = props.validate as (value: unknown) => unknown;
  const validator = wrapValidate(async (value) => {
    const result = (await validate(value)) as { value?: unknown; issues?: readonly StandardIssue[] };
    if (result?.issues === undefined) return { value: result?.value };
    return { issues: result.issues };
  });
  return Object.freeze({ kind: "standard-schema", source: schema as ToolSchema, validator, jsonSchema });
}

interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** Another library's validate as a zod schema, so the runner validates every kind the same way and words issues alike. */
function wrapValidate(
  validate: (value: unknown) => Promise<{ value: unknown } | { issues: readonly StandardIssue[] }>,
): z.core.$ZodType {
  return z.unknown().transform(async (value, ctx) => {
    const result = await validate(value);
    if ("value" in result) return result.value;
    const issues = result.issues.length > 0 ? result.issues : [{ message: "is invalid" }];
    for (const issue of issues) {
      const path = (issue.path ?? []).map((segment) =>
        typeof segment === "object" && segment !== null ? segment.key : segment,
      );
      ctx.addIssue({ code: "custom", message: String(issue.message), path: path as (string | number)[] });
    }
    return z.NEVER;
  });
}

/** The issues in what an AI SDK validate failed with: a ZodError's, a Standard Schema's (as `cause`), or its message. */
function issuesOfError(error: unknown): readonly StandardIssue[] {
  if (typeof error === "object" && error !== null) {
    const { issues, cause, message } = error as { issues?: unknown; cause?: unknown; message?: unknown };
    if (Array.isArray(issues)) return issues as StandardIssue[];
    if (Array.isArray(cause)) return cause as StandardIssue[];
    if (
      typeof cause === "object" &&
      cause !== null &&
      Array.isArray((cause as { issues?: unknown }).issues)
    ) {
      return (cause as { issues: StandardIssue[] }).issues;
    }
    if (typeof message === "string") return [{ message }];
  }
  return [{ message: typeof error === "string" ? error : "is invalid" }];
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === "object") return "an object";
  if (typeof value === "undefined") return "undefined";
  return `a ${typeof value}`;
}
