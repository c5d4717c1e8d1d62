import { describeGuestGlobals } from "@suaveplan/sandbox-core/guest-script";
import { z } from "zod";
import {
  type AliasScope,
  jsonSchemaToTs,
  pascalCase,
  TS_TYPE_KEYWORD,
  tsDoc,
} from "./internal/json-schema-to-ts.js";
import { type CompiledToolSchema, type NormalisedToolSet, normaliseTools } from "./normalise-tools.js";
import type { ToolSet } from "./tool-definition.js";

type Io = "input" | "output";

const jsonSchemas = new WeakMap<CompiledToolSchema, Partial<Record<Io, unknown>>>();

/**
 * The TypeScript declaration of the guest's `tools` global, for the model's
 * prompt: one method per tool, typed from its schemas (a zod schema through
 * `z.toJSONSchema` — the input side of `inputSchema`, so fields with a
 * default are optional, and the output side of `outputSchema`), with the
 * tool's `description` (and the schemas' and properties' descriptions) as
 * TSDoc. A tool without `outputSchema` returns `Promise<unknown>`; what a
 * schema cannot say in TypeScript is `unknown`. Recursive schemas become
 * `type` aliases declared before `tools`. After it, a `//` comment block
 * lists the guest's globals beside the JavaScript built-ins and what it
 * lacks (`fetch`, `require` …), so the model is told what it can use. The
 * text is valid TypeScript.
 *
 * @example
 * toolDeclarations({ getWeather: { description: "Current weather for a city", inputSchema: z.object({ city: z.string() }), outputSchema: z.object({ tempC: z.number() }), execute } });
 * // declare const tools: {
 * //   /** Current weather for a city *\/
 * //   getWeather(input: { city: string }): Promise<{ tempC: number }>;
 * // };
 * //
 * // // Globals beside the JavaScript built-ins:
 * // // - console: log, info, warn, error, debug; captured as the run's logs
 * // // …
 */
export function toolDeclarations(tools: ToolSet | NormalisedToolSet | undefined): string {
  return `${declareTools(tools)}\n\n${GUEST_GLOBALS_COMMENT}`;
}

/**
 * What the guest has beside the JavaScript built-ins (`describeGuestGlobals()`
 * of `@suaveplan/sandbox-core/guest-script`), as `//` comment lines: a model
 * reads the list as prose, and the text stays valid TypeScript without
 * redeclaring what the compiler's own library already declares.
 */
const GUEST_GLOBALS_COMMENT = describeGuestGlobals()
  .split("\n")
  .map((line) => `// ${line}`)
  .join("\n");

function declareTools(tools: ToolSet | NormalisedToolSet | undefined): string {
  const set = normaliseTools(tools, "config");
  if (set.names.length === 0) return "declare const tools: {};";
  const scope: AliasScope = { used: new Set(), lines: [] };
  const methods: string[] = [];
  for (const name of set.names) {
    const tool = set.get(name);
    if (tool === undefined) continue;
    const prefix = pascalCase(name);
    const inputSchema = jsonSchemaOf(tool.inputSchema, "input");
    const input = jsonSchemaToTs(inputSchema, `${prefix}Input`, scope, "  ");
    const outputSchema =
      tool.outputSchema === undefined ? undefined : jsonSchemaOf(tool.outputSchema, "output");
    const output =
      outputSchema === undefined ? "unknown" : jsonSchemaToTs(outputSchema, `${prefix}Output`, scope, "  ");
    const doc: string[] = [];
    if (tool.description !== undefined && tool.description.trim() !== "") doc.push(tool.description.trim());
    const inputDoc = descriptionOf(inputSchema);
    if (inputDoc !== undefined) doc.push(`@param input ${inputDoc}`);
    const outputDoc = descriptionOf(outputSchema);
    if (outputDoc !== undefined) doc.push(`@returns ${outputDoc}`);
    const parameter = input === "unknown" ? "input?: unknown" : `input: ${input}`;
    methods.push(...tsDoc(doc, "  "), `  ${name}(${parameter}): Promise<${output}>;`);
  }
  const declaration = ["declare const tools: {", ...methods, "};"].join("\n");
  return scope.lines.length === 0 ? declaration : `${scope.lines.join("\n")}\n\n${declaration}`;
}

/** The JSON Schema a declaration is made from: the source itself, or zod's rendering of the zod schema (cached). */
function jsonSchemaOf(schema: CompiledToolSchema, io: Io): unknown {
  if (schema.kind !== "zod") return schema.jsonSchema ?? {};
  let cached = jsonSchemas.get(schema);
  if (cached === undefined) {
    cached = {};
    jsonSchemas.set(schema, cached);
  }
  if (!(io in cached)) {
    try {
      cached[io] = z.toJSONSchema(schema.validator, {
        io,
        unrepresentable: "any",
        cycles: "ref",
        reused: "inline",
        // What the codec carries but JSON Schema cannot say, kept for the TypeScript mapping.
        override(ctx) {
          const type = ctx.zodSchema._zod.def.type;
          if (type === "date") ctx.jsonSchema[TS_TYPE_KEYWORD] = "Date";
          else if (type === "bigint") ctx.jsonSchema[TS_TYPE_KEYWORD] = "bigint";
          else if (type === "undefined" || type === "void") ctx.jsonSchema[TS_TYPE_KEYWORD] = "undefined";
        },
      });
    } catch {
      // A schema zod cannot render (a custom type): declared as unknown.
      cached[io] = {};
    }
  }
  return cached[io];
}

function descriptionOf(schema: unknown): string | undefined {
  if (typeof schema !== "object" || schema === null) return undefined;
  const { description } = schema as { description?: unknown };
  return typeof description === "string" && description.trim() !== "" ? description.trim() : undefined;
}
