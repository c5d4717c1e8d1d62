import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as zm from "zod/mini";
import { z as z3 } from "zod/v3";
import {
  createToolRunner,
  defineTool,
  isNormalisedToolSet,
  mergeTools,
  NO_TOOLS,
  normaliseTools,
  type ToolSet,
} from "./index.js";

const execute = () => "done";

function thrown(fn: () => unknown): { code: unknown; message: unknown; details: unknown } {
  try {
    fn();
  } catch (error) {
    const { code, message, details } = error as { code: unknown; message: unknown; details: unknown };
    return { code, message, details };
  }
  throw new Error("did not throw");
}

describe("normaliseTools", () => {
  it("accepts zod 4, zod mini and JSON Schema tools, and ignores the other fields of an AI SDK tool", () => {
    const set = normaliseTools({
      getWeather: {
        description: "Current weather for a city",
        inputSchema: z.object({ city: z.string() }),
        outputSchema: z.object({ tempC: z.number() }),
        execute,
      },
      search: { inputSchema: zm.object({ q: zm.string() }), execute },
      raw: { inputSchema: { type: "object", properties: { n: { type: "integer" } } }, execute },
      $private_1: Object.assign({ inputSchema: {}, execute }, { type: "function", providerOptions: {} }),
    });
    expect(isNormalisedToolSet(set)).toBe(true);
    expect(set.names).toEqual(["getWeather", "search", "raw", "$private_1"]);
    expect(
      set.names.map((name) => {
        const tool = set.get(name);
        return [name, tool?.description, tool?.inputSchema.kind, tool?.outputSchema?.kind];
      }),
    ).toEqual([
      ["getWeather", "Current weather for a city", "zod", "zod"],
      ["search", undefined, "zod", undefined],
      ["raw", undefined, "json-schema", undefined],
      ["$private_1", undefined, "json-schema", undefined],
    ]);
    expect(set.get("toString")).toBeUndefined();
  });

  it("gives the empty set for undefined and returns a normalised set as it is", () => {
    expect(normaliseTools(undefined)).toBe(NO_TOOLS);
    expect(NO_TOOLS.names).toEqual([]);
    const set = normaliseTools({ a: { inputSchema: {}, execute } });
    expect(normaliseTools(set)).toBe(set);
  });

  it("reads each tool once: changing the definition or its JSON Schema later changes nothing", async () => {
    const inputSchema = { type: "string", maxLength: 3 };
    const definition = { inputSchema, execute: (s: string) => `first ${s}` };
    const set = normaliseTools({ greet: definition });
    definition.execute = (s: string) => `second ${s}`;
    inputSchema.maxLength = 100;
    const run = createToolRunner({ tools: set });
    await expect(run.call("greet", "abc", "1")).resolves.toBe("first abc");
    await expect(run.call("greet", "abcd", "2")).rejects.toThrow(
      "input: Too big: expected string to have <=3 characters",
    );
    expect(set.get("greet")?.inputSchema.source).toEqual({ type: "string", maxLength: 3 });
    expect(Object.isFrozen(set.get("greet")?.inputSchema.source)).toBe(true);
  });

  const zodObjectProto = JSON.parse('{"__proto__": {"inputSchema": {}}}') as ToolSet;
  it.each<[string, unknown, string, Record<string, unknown>]>([
    [
      "a tool set that is not an object",
      "getWeather",
      'config.tools: must be an object of tool definitions by name (got the string "getWeather")',
      { field: "config.tools" },
    ],
    [
      "an array",
      [],
      "config.tools: must be an object of tool definitions by name (got an array)",
      { field: "config.tools" },
    ],
    [
      "a name with a space",
      { "get weather": { inputSchema: {}, execute } },
      'config.tools["get weather"]: a tool name must be a JavaScript identifier (letters, digits, _ and $, not starting with a digit; not __proto__), as the guest calls it as tools.<name>',
      { field: 'config.tools["get weather"]', tool: "get weather" },
    ],
    [
      "a name starting with a digit",
      { "1st": { inputSchema: {}, execute } },
      'config.tools["1st"]: a tool name must be a JavaScript identifier (letters, digits, _ and $, not starting with a digit; not __proto__), as the guest calls it as tools.<name>',
      { field: 'config.tools["1st"]', tool: "1st" },
    ],
    [
      "__proto__",
      zodObjectProto,
      "config.tools.__proto__: a tool name must be a JavaScript identifier (letters, digits, _ and $, not starting with a digit; not __proto__), as the guest calls it as tools.<name>",
      { field: "config.tools.__proto__", tool: "__proto__" },
    ],
    [
      "a definition that is a function",
      { f: execute },
      "config.tools.f: must be a tool definition { description?, inputSchema, outputSchema?, execute } (got a function)",
      { field: "config.tools.f", tool: "f" },
    ],
    [
      "no execute",
      { f: { inputSchema: {} } },
      "config.tools.f.execute: must be a function (input, { abortSignal, toolCallId }) => output (got undefined)",
      { field: "config.tools.f.execute", tool: "f" },
    ],
    [
      "a description that is not a string",
      { f: { description: 3, inputSchema: {}, execute } },
      "config.tools.f.description: must be a string or a function ({ context }) => string (got a number)",
      { field: "config.tools.f.description", tool: "f" },
    ],
    [
      "no inputSchema",
      { f: { execute } },
      "config.tools.f.inputSchema: must be a zod 4 schema, a JSON Schema object, the AI SDK's jsonSchema() or a Standard Schema (got undefined)",
      { field: "config.tools.f.inputSchema", tool: "f" },
    ],
    [
      "a zod 3 schema",
      { f: { inputSchema: z3.object({ a: z3.string() }), execute } },
      'config.tools.f.inputSchema: is a zod 3 schema; use zod 4 (zod@^4: `import { z } from "zod"`) or a JSON Schema object',
      { field: "config.tools.f.inputSchema", tool: "f" },
    ],
    [
      "a Standard Schema of another version than 1",
      {
        f: {
          inputSchema: { "~standard": { version: 2, vendor: "valibot", validate: () => ({ value: 1 }) } },
          execute,
        },
      },
      "config.tools.f.inputSchema: is a Standard Schema but not version 1 with a ~standard.validate function; use a zod 4 schema, a JSON Schema object or a Standard Schema v1",
      { field: "config.tools.f.inputSchema", tool: "f" },
    ],
    [
      "an instance of a class",
      { f: { inputSchema: {}, outputSchema: new Date(0), execute } },
      "config.tools.f.outputSchema: must be a zod 4 schema or a plain JSON Schema object (got an instance of a class)",
      { field: "config.tools.f.outputSchema", tool: "f" },
    ],
    [
      "a JSON Schema holding a function",
      { f: { inputSchema: { type: "string", pattern: () => "a" }, execute } },
      "config.tools.f.inputSchema: must be a zod 4 schema or a JSON Schema object of plain data (it holds a function or another value that cannot be copied)",
      { field: "config.tools.f.inputSchema", tool: "f" },
    ],
    [
      "a JSON Schema zod cannot honour",
      { f: { inputSchema: { if: { type: "string" }, else: { minLength: 1 } }, execute } },
      "config.tools.f.inputSchema: is not a JSON Schema zod can validate with: Conditional schemas (if/then/else) are not supported",
      { field: "config.tools.f.inputSchema", tool: "f" },
    ],
    [
      "a JSON Schema with an external $ref",
      { f: { inputSchema: { $ref: "https://example.com/city.json" }, execute } },
      "config.tools.f.inputSchema: is not a JSON Schema zod can validate with: External $ref is not supported, only local refs (#/...) are allowed",
      { field: "config.tools.f.inputSchema", tool: "f" },
    ],
  ])("refuses %s with SANDBOX_INVALID_CONFIG naming the tool and field", (_, tools, message, details) => {
    expect(thrown(() => normaliseTools(tools as ToolSet))).toEqual({
      code: SANDBOX_CODES.INVALID_CONFIG,
      message: `Invalid sandbox config: ${message} (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md`,
      details,
    });
  });

  it("says options.tools and SANDBOX_INVALID_OPTIONS for per-execution tools", () => {
    expect(thrown(() => normaliseTools({ f: { inputSchema: {} } } as unknown as ToolSet, "options"))).toEqual(
      {
        code: SANDBOX_CODES.INVALID_OPTIONS,
        message:
          "Invalid execution options: options.tools.f.execute: must be a function (input, { abortSignal, toolCallId }) => output (got undefined) (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
        details: { field: "options.tools.f.execute", tool: "f" },
      },
    );
  });
});

describe("mergeTools", () => {
  it("lets per-execution tools win by name, keeping each name's first position", () => {
    const sandboxLevel = normaliseTools({
      a: { description: "sandbox a", inputSchema: {}, execute },
      b: { description: "sandbox b", inputSchema: {}, execute },
    });
    const perCall = normaliseTools({
      c: { description: "call c", inputSchema: {}, execute },
      a: { description: "call a", inputSchema: {}, execute },
    });
    const merged = mergeTools(sandboxLevel, perCall);
    expect(merged.names.map((name) => [name, merged.get(name)?.description])).toEqual([
      ["a", "call a"],
      ["b", "sandbox b"],
      ["c", "call c"],
    ]);
    expect(isNormalisedToolSet(merged)).toBe(true);
    expect(sandboxLevel.names).toEqual(["a", "b"]);
  });

  it("returns the one non-empty set, or the empty set", () => {
    const only = normaliseTools({ a: { inputSchema: {}, execute } });
    expect(mergeTools(undefined, only, NO_TOOLS)).toBe(only);
    expect(mergeTools()).toBe(NO_TOOLS);
  });

  it("refuses a set that was not normalised", () => {
    const only = normaliseTools({ a: { inputSchema: {}, execute } });
    const raw = { names: ["x"], get: () => undefined };
    expect(() => mergeTools(only, raw)).toThrowError(
      new TypeError("mergeTools: every argument must come from normaliseTools (or be undefined)"),
    );
  });
});

describe("defineTool", () => {
  it("returns the tool as it is, typed from its zod schema", async () => {
    const tool = defineTool({
      inputSchema: z.object({ city: z.string() }),
      execute: ({ city }) => city.toUpperCase(),
    });
    await expect(
      createToolRunner({ tools: { shout: tool } }).call("shout", { city: "rome" }, "1"),
    ).resolves.toBe("ROME");
  });
});
