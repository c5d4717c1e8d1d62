import { isSandboxError } from "@suaveplan/sandbox-core/error-codes";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createToolRunner, normaliseTools, ToolCallError } from "./index.js";

// Property tests of the tool edge: any tool set gives a normalised set or a coded error naming the
// field; any JSON Schema an embedder writes is compiled or refused with a coded error; and a call
// with any input resolves or rejects with a ToolCallError — nothing else reaches the guest.

const anything = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withMap: true,
  withNullPrototype: true,
});
/** JSON-Schema-shaped objects: real keywords with values of any type, nested. */
const { schema } = fc.letrec((tie) => ({
  schema: fc.dictionary(
    fc.constantFrom(
      "type",
      "properties",
      "items",
      "required",
      "enum",
      "const",
      "anyOf",
      "oneOf",
      "allOf",
      "not",
      "$ref",
      "minimum",
      "maximum",
      "pattern",
      "format",
      "additionalProperties",
      "minItems",
      "default",
      "$schema",
      "$defs",
    ),
    fc.oneof(
      { depthSize: "small" },
      anything,
      fc.constantFrom(
        "object",
        "string",
        "number",
        "integer",
        "array",
        "boolean",
        "null",
        "nope",
        "([",
        "#/$defs/x",
      ),
      fc.array(fc.constantFrom("a", "b", "object", "string"), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom("a", "b"), tie("schema"), { maxKeys: 2 }),
      tie("schema"),
    ),
    { maxKeys: 4 },
  ),
}));
const definition = fc.record(
  {
    description: fc.oneof(fc.string({ maxLength: 10 }), anything),
    inputSchema: fc.oneof(schema, anything, fc.constant(z.object({ a: z.string() }))),
    outputSchema: fc.oneof(schema, anything),
    execute: fc.oneof(
      fc.constant(async (input: unknown) => input),
      anything,
    ),
  },
  { requiredKeys: [] },
);
const toolSet = fc.dictionary(
  fc.oneof(fc.constantFrom("getWeather", "a1", "$x", "_"), fc.string({ maxLength: 6 })),
  fc.oneof(definition, anything),
  { maxKeys: 3, noNullPrototype: true },
);

describe("tool definitions and calls (properties)", () => {
  it("normaliseTools: a normalised set or a coded error naming the tool and the field, for config and per-execution tools", () => {
    fc.assert(
      fc.property(
        fc.oneof(toolSet, anything),
        fc.constantFrom("config" as const, "options" as const),
        (tools, where) => {
          try {
            const set = normaliseTools(tools as never, where);
            expect(Array.isArray(set.names)).toBe(true);
          } catch (error) {
            const expected = where === "config" ? "SANDBOX_INVALID_CONFIG" : "SANDBOX_INVALID_OPTIONS";
            expect({ code: isSandboxError(error) ? error.code : String(error) }).toEqual({ code: expected });
            expect((error as Error).message).toMatch(where === "config" ? /config\.tools/ : /options\.tools/);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("a call with any input resolves or rejects with a ToolCallError, never anything else", async () => {
    const tools = normaliseTools({
      pick: {
        description: "typed input",
        inputSchema: z.object({ city: z.string(), n: z.number().int().optional() }),
        execute: async (input: { city: string }) => input.city.length,
      },
      json: {
        inputSchema: {
          type: "object",
          properties: { tags: { type: "array", items: { type: "string" } } },
          required: ["tags"],
        },
        execute: async (input: { tags: string[] }) => input.tags.join(","),
      },
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("pick", "json", "missing", "__proto__", "constructor"),
        anything,
        async (name, input) => {
          const runner = createToolRunner({ tools });
          try {
            await runner.call(name, input, "call-1");
          } catch (error) {
            expect(error).toBeInstanceOf(ToolCallError);
          } finally {
            runner.close();
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
