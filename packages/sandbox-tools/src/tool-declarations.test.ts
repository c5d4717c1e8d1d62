import { ABSENT_GUEST_GLOBALS, GUEST_GLOBALS } from "@suaveplan/sandbox-core/guest-script";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as zm from "zod/mini";
import { type JsonSchemaObject, normaliseTools, type ToolSet, toolDeclarations } from "./index.js";
import { jsonSchemaToTs } from "./internal/json-schema-to-ts.js";

const execute = () => undefined;

/** The guest's globals, as toolDeclarations() ends every text. */
const GLOBALS_COMMENT = [
  "// Globals beside the JavaScript built-ins:",
  ...GUEST_GLOBALS.map((global) => `// - ${global.name}: ${global.summary}`),
  "// Not available:",
  ...ABSENT_GUEST_GLOBALS.map((global) => `// - ${global.name}: ${global.summary}`),
].join("\n");

/** toolDeclarations() without the globals comment every text ends with (checked here). */
function declared(tools: Parameters<typeof toolDeclarations>[0]): string {
  const text = toolDeclarations(tools);
  expect(text.endsWith(`\n\n${GLOBALS_COMMENT}`)).toBe(true);
  return text.slice(0, -(GLOBALS_COMMENT.length + 2));
}

/**
 * Compile `files` (name → text) as one strict TypeScript program against the
 * ES2023 library and return its diagnostics as `file:line: message`.
 */
function compile(files: Record<string, string>): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts"],
    types: [],
    exactOptionalPropertyTypes: false,
  };
  const host = ts.createCompilerHost(options);
  const fileName = (name: string) => `/virtual/${name}`;
  const texts = new Map(Object.entries(files).map(([name, text]) => [fileName(name), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (name, languageVersion, onError, shouldCreate) => {
    const text = texts.get(name);
    return text === undefined
      ? getSourceFile.call(host, name, languageVersion, onError, shouldCreate)
      : ts.createSourceFile(name, text, languageVersion, true);
  };
  host.fileExists = (name) => texts.has(name) || fileExists.call(host, name);
  host.readFile = (name) => texts.get(name) ?? readFile.call(host, name);
  const program = ts.createProgram([...texts.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file === undefined || d.start === undefined
        ? ""
        : `${d.file.fileName.replace("/virtual/", "")}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: `;
    return `${where}${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}

/** The declared parameter type of a one-tool set with `inputSchema`. */
function inputType(inputSchema: ToolSet[string]["inputSchema"]): string {
  const text = declared({ t: { inputSchema, execute } });
  const match = /^ {2}t\(input\??: ([\s\S]*)\): Promise<unknown>;$/m.exec(text);
  if (match?.[1] === undefined) throw new Error(`unexpected declaration:\n${text}`);
  return match[1];
}

describe("toolDeclarations", () => {
  it("declares the tools global with each description as TSDoc", () => {
    expect(
      declared({
        getWeather: {
          description: "Current weather for a city",
          inputSchema: z.object({ city: z.string() }),
          outputSchema: z.object({ tempC: z.number() }),
          execute,
        },
      }),
    ).toBe(
      "declare const tools: {\n  /** Current weather for a city */\n  getWeather(input: { city: string }): Promise<{ tempC: number }>;\n};",
    );
  });

  it("declares an empty tool set", () => {
    expect(declared(undefined)).toBe("declare const tools: {};");
  });

  it("ends with the guest's globals as a comment block, so the model knows what it has and lacks", () => {
    const text = toolDeclarations({ ping: { inputSchema: z.object({}), execute } });
    expect(text).toBe(
      [
        "declare const tools: {",
        "  ping(input: Record<string, unknown>): Promise<unknown>;",
        "};",
        "",
        "// Globals beside the JavaScript built-ins:",
        "// - console: log, info, warn, error, debug; captured as the run's logs",
        ...GUEST_GLOBALS.slice(1).map((global) => `// - ${global.name}: ${global.summary}`),
        "// Not available:",
        "// - fetch: no network from guest code; call a host tool instead",
        ...ABSENT_GUEST_GLOBALS.slice(1).map((global) => `// - ${global.name}: ${global.summary}`),
      ].join("\n"),
    );
    // Still valid TypeScript on its own.
    expect(compile({ "tools.d.ts": text })).toEqual([]);
  });

  it("lays out documented and long objects one member a line, with property, input and output TSDoc", () => {
    expect(
      declared(
        normaliseTools({
          search: {
            description: "Search the catalogue.\nResults are ranked; the */ in this text is escaped.",
            inputSchema: z
              .object({
                query: z.string().describe("What to look for"),
                limit: z.number().int().min(1).default(10),
                tags: z.array(z.enum(["new", "sale"])).optional(),
                "price range": z.tuple([z.number(), z.number()]),
                sort: z.union([z.literal("price"), z.literal("rating")]).nullable(),
                since: z.date().optional(),
                legacy: z.boolean().optional().meta({ deprecated: true }),
              })
              .describe("The search"),
            outputSchema: z
              .array(z.object({ id: z.string(), score: z.number() }))
              .describe("Hits, best first"),
            execute,
          },
          ping: { inputSchema: z.object({}), execute },
        }),
      ),
    ).toBe(`declare const tools: {
  /**
   * Search the catalogue.
   * Results are ranked; the *\\/ in this text is escaped.
   * @param input The search
   * @returns Hits, best first
   */
  search(input: {
    /** What to look for */
    query: string;
    /** @default 10 */
    limit?: number;
    tags?: ("new" | "sale")[];
    "price range": [number, number];
    sort: "price" | "rating" | null;
    since?: Date;
    /** @deprecated */
    legacy?: boolean;
  }): Promise<{ id: string; score: number }[]>;
  ping(input: Record<string, unknown>): Promise<unknown>;
};`);
  });

  it.each<[string, JsonSchemaObject, string]>([
    ["string", { type: "string" }, "string"],
    ["number", { type: "number" }, "number"],
    ["integer", { type: "integer" }, "number"],
    ["boolean", { type: "boolean" }, "boolean"],
    ["null", { type: "null" }, "null"],
    ["a type list", { type: ["string", "number"] }, "string | number"],
    ["nullable (OpenAPI)", { type: "string", nullable: true }, "string | null"],
    ["const", { const: "on" }, '"on"'],
    ["an enum of mixed literals", { enum: ["a", 2, true, null] }, '"a" | 2 | true | null'],
    ["an array", { type: "array", items: { type: "string" } }, "string[]"],
    ["an array of a union", { type: "array", items: { type: ["string", "null"] } }, "(string | null)[]"],
    ["an array without items", { type: "array" }, "unknown[]"],
    [
      "a closed tuple",
      { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false, minItems: 2 },
      "[string, number]",
    ],
    [
      "a tuple with optional elements and a rest",
      {
        type: "array",
        prefixItems: [{ type: "string" }, { type: "number" }],
        items: { type: "boolean" },
        minItems: 1,
      },
      "[string, number?, ...boolean[]]",
    ],
    [
      "a draft-07 tuple",
      { type: "array", items: [{ type: "string" }], additionalItems: false, minItems: 1 },
      "[string]",
    ],
    ["anyOf", { anyOf: [{ type: "string" }, { type: "number" }] }, "string | number"],
    ["oneOf, flattened", { oneOf: [{ anyOf: [{ const: 1 }, { const: 2 }] }, { const: 3 }] }, "1 | 2 | 3"],
    [
      "allOf",
      {
        allOf: [
          { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
          { type: "object", properties: { b: { type: "number" } }, required: ["b"] },
        ],
      },
      "{ a: string } & { b: number }",
    ],
    [
      "an object with required and optional properties",
      { type: "object", properties: { a: { type: "string" }, "b-c": { type: "number" } }, required: ["a"] },
      '{ a: string; "b-c"?: number }',
    ],
    ["any object", { type: "object" }, "Record<string, unknown>"],
    ["a map", { type: "object", additionalProperties: { type: "number" } }, "Record<string, number>"],
    [
      "the empty object",
      { type: "object", properties: {}, additionalProperties: false },
      "Record<string, never>",
    ],
    [
      "properties and more",
      {
        type: "object",
        properties: { a: { type: "string" }, b: { type: "boolean" } },
        required: ["a"],
        additionalProperties: { type: "number" },
      },
      "{ a: string; b?: boolean; [key: string]: number | string | boolean | undefined }",
    ],
    [
      "keys from an enum",
      {
        type: "object",
        propertyNames: { enum: ["x", "y"] },
        additionalProperties: { type: "number" },
        required: ["x"],
      },
      "{ x: number; y?: number }",
    ],
    ["nothing", {}, "unknown"],
    ["not anything", { not: {} }, "never"],
    ["a local $ref", { $defs: { City: { type: "string" } }, $ref: "#/$defs/City" }, "string"],
    [
      "a draft-07 definitions $ref",
      { definitions: { N: { type: "number" } }, items: { $ref: "#/definitions/N" } },
      "number[]",
    ],
    ["a marker for what JSON cannot say", { "x-suaveplan-ts": "bigint" }, "bigint"],
    ["a marker outside the closed set", { "x-suaveplan-ts": "string; evil(): void" }, "unknown"],
  ])("maps %s", (_, schema, expected) => {
    if (expected === "unknown")
      expect(declared({ t: { inputSchema: schema, execute } })).toContain("t(input?: unknown)");
    else expect(inputType(schema)).toBe(expected);
  });

  it("names recursive schemas with type aliases, for zod and JSON Schema alike", () => {
    type Category = { name: string; children: Category[] };
    const category: z.ZodType<Category> = z.object({
      name: z.string(),
      get children() {
        return z.array(category);
      },
    });
    const text = declared({
      addCategory: {
        inputSchema: category,
        outputSchema: z.object({ root: category, parent: category.optional() }),
        execute,
      },
      walk: {
        inputSchema: {
          type: "object",
          properties: { start: { $ref: "#/$defs/Node" } },
          required: ["start"],
          $defs: {
            Node: {
              type: "object",
              properties: {
                id: { type: "string" },
                next: { anyOf: [{ $ref: "#/$defs/Node" }, { type: "null" }] },
              },
              required: ["id", "next"],
            },
          },
        },
        execute,
      },
    });
    expect(text).toBe(`type AddCategoryInput = { name: string; children: AddCategoryInput[] };
type AddCategoryOutputSchema0 = { name: string; children: AddCategoryOutputSchema0[] };
type WalkInputNode = { id: string; next: WalkInputNode | null };

declare const tools: {
  addCategory(input: AddCategoryInput): Promise<{ root: AddCategoryOutputSchema0; parent?: AddCategoryOutputSchema0 }>;
  walk(input: { start: WalkInputNode }): Promise<unknown>;
};`);
    expect(compile({ "tools.d.ts": text })).toEqual([]);
  });

  it("maps what normaliseTools refuses to unknown, should it ever get there", () => {
    const scope = { used: new Set<string>(), lines: [] };
    expect(
      [
        { $ref: "#/$defs/Missing" },
        { $ref: "https://example.com/s.json" },
        { type: "date" },
        { items: { $ref: "#/0" } },
      ].map((schema) => jsonSchemaToTs(schema, "T", scope, "")),
    ).toEqual(["unknown", "unknown", "unknown", "unknown[]"]);
    expect(scope.lines).toEqual([]);
  });

  it("declares zod mini schemas too", () => {
    expect(inputType(zm.object({ q: zm.string(), n: zm.optional(zm.number()) }))).toBe(
      "{ q: string; n?: number }",
    );
  });

  it("uses the input side of an input schema and the output side of an output schema", () => {
    const text = declared({
      parse: {
        inputSchema: z.object({ n: z.string().transform(Number), flag: z.boolean().default(false) }),
        outputSchema: z.object({ n: z.string().transform(Number), flag: z.boolean().default(false) }),
        execute,
      },
    });
    expect(text).toBe(`declare const tools: {
  parse(input: {
    n: string;
    /** @default false */
    flag?: boolean;
  }): Promise<{
    n: unknown;
    /** @default false */
    flag: boolean;
  }>;
};`);
  });

  it("generates declarations a strict TypeScript program compiles against, and a wrong call fails to compile", () => {
    const declarations = declared({
      getWeather: {
        description: "Current weather for a city",
        inputSchema: z.object({ city: z.string(), units: z.enum(["C", "F"]).optional() }),
        outputSchema: z.object({ tempC: z.number(), conditions: z.array(z.string()) }),
        execute,
      },
      book: {
        inputSchema: {
          type: "object",
          properties: {
            hotel: { type: "string", description: "Hotel id" },
            nights: { type: "integer", minimum: 1 },
            guests: {
              type: "array",
              items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
            },
          },
          required: ["hotel", "nights"],
        },
        outputSchema: {
          type: "object",
          properties: { confirmation: { type: "string" } },
          required: ["confirmation"],
        },
        execute,
      },
      log: { inputSchema: z.unknown(), execute },
    });
    const program = `
async function main(): Promise<number> {
  const w = await tools.getWeather({ city: "Paris" });
  const first: string | undefined = w.conditions[0];
  const b = await tools.book({ hotel: "h1", nights: 2, guests: [{ name: "Ada" }] });
  const code: string = b.confirmation;
  const anything: unknown = await tools.log();
  void first; void code; void anything;
  return w.tempC * 2;
}
void main;
`;
    expect(compile({ "tools.d.ts": declarations, "main.ts": program })).toEqual([]);

    const wrong = `
async function main(): Promise<void> {
  await tools.getWeather({ city: 42 });
  await tools.book({ hotel: "h1" });
  const t: string = (await tools.getWeather({ city: "Rome" })).tempC;
  await tools.missing();
  void t;
}
void main;
`;
    expect(compile({ "tools.d.ts": declarations, "main.ts": wrong })).toEqual([
      "main.ts:3: Type 'number' is not assignable to type 'string'.",
      "main.ts:4: Argument of type '{ hotel: string; }' is not assignable to parameter of type '{ hotel: string; nights: number; guests?: { name: string; }[] | undefined; }'.   Property 'nights' is missing in type '{ hotel: string; }' but required in type '{ hotel: string; nights: number; guests?: { name: string; }[] | undefined; }'.",
      "main.ts:5: Type 'number' is not assignable to type 'string'.",
      "main.ts:6: Property 'missing' does not exist on type '{ getWeather(input: { city: string; units?: \"C\" | \"F\" | undefined; }): Promise<{ tempC: number; conditions: string[]; }>; book(input: { hotel: string; nights: number; guests?: { name: string; }[] | undefined; }): Promise<...>; log(input?: unknown): Promise<...>; }'.",
    ]);
  });

  it("compiles every mapping at once", () => {
    const schemas: JsonSchemaObject[] = [
      { type: ["string", "number"], nullable: true },
      { enum: ["a", 2, true, null] },
      {
        type: "array",
        prefixItems: [{ type: "string" }, { type: "number" }],
        items: { type: "boolean" },
        minItems: 1,
      },
      { type: "array", items: [{ type: "string" }], additionalItems: false, minItems: 1 },
      { oneOf: [{ anyOf: [{ const: 1 }, { const: 2 }] }, { const: 3 }] },
      {
        allOf: [
          { type: "object", properties: { a: { type: "string" } } },
          { anyOf: [{ type: "object", properties: { b: { type: "number" } } }, { type: "null" }] },
        ],
      },
      {
        type: "object",
        properties: {
          a: { type: "string", description: "multi\nline" },
          "x y": { type: "boolean", default: true },
        },
        required: ["a"],
        additionalProperties: { type: "number" },
        patternProperties: { "^z": { type: "null" } },
      },
      { type: "object", propertyNames: { enum: ["x", "y"] }, additionalProperties: { type: "number" } },
      { type: "object", properties: {}, additionalProperties: false },
      { not: {} },
      {
        $defs: {
          T: {
            type: "object",
            properties: { kids: { type: "array", items: { $ref: "#/$defs/T" } }, up: { $ref: "#" } },
          },
        },
        $ref: "#/$defs/T",
      },
    ];
    const tools: ToolSet = Object.fromEntries(
      schemas.map((schema, i) => [`t${i}`, { inputSchema: schema, outputSchema: schema, execute }]),
    );
    const text = declared(tools);
    expect(compile({ "tools.d.ts": text })).toEqual([]);
  });
});
