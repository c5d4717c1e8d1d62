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
 */
export interface CompiledToolSchema {
  /** `zod` for a zod 4 schema, `json-schema` for a JSON Schema object. */
  readonly kind: "zod" | "json-schema";
  /** The schema as the tool wrote it. */
  readonly source: ToolSchema;
  /** What validates: the zod schema itself, or the one converted from the JSON Schema. */
  readonly validator: z.core.$ZodType;
}

/** One tool after {@link normaliseTools}: checked, with its fields read once. */
export interface NormalisedTool {
  readonly name: string;
  readonly description: string | undefined;
  readonly inputSchema: CompiledToolSchema;
  readonly outputSchema: CompiledToolSchema | undefined;
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
    const { description, inputSchema, outputSchema, execute } = definition as Partial<ToolDefinition>;
    if (description !== undefined && typeof description !== "string") {
      fail(`${at}.description`, `must be a string (got ${kindOf(description)})`, { tool: name });
    }
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
        description,
        inputSchema: compile(inputSchema, "inputSchema"),
        outputSchema: outputSchema === undefined ? undefined : compile(outputSchema, "outputSchema"),
        execute: execute as NormalisedTool["execute"],
      }),
    );
  }
  return toolSet(byName);
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

/** The compiled schema, or why `schema` is not one we accept. */
function compileSchema(schema: unknown): CompiledToolSchema | string {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return `must be a zod 4 schema or a JSON Schema object (got ${kindOf(schema)})`;
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
  if ("~standard" in schema) {
    return "is a Standard Schema of a library other than zod 4; use a zod 4 schema or a JSON Schema object";
  }
  const proto = getPrototypeOf(schema);
  if (proto !== objectPrototype && proto !== null) {
    return "must be a zod 4 schema or a plain JSON Schema object (got an instance of a class)";
  }
  // A frozen copy: what validates and what is declared cannot change after normalising.
  let copy: JsonSchemaObject;
  try {
    copy = deepFreeze(structuredClone(schema) as JsonSchemaObject);
  } catch {
    return "must be a zod 4 schema or a JSON Schema object of plain data (it holds a function or another value that cannot be copied)";
  }
  try {
    const validator = z.fromJSONSchema(copy as z.core.JSONSchema.JSONSchema);
    return Object.freeze({ kind: "json-schema", source: copy, validator });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return `is not a JSON Schema zod can validate with: ${reason}`;
  }
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
