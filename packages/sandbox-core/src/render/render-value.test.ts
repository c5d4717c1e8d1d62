import { describe, expect, it } from "vitest";
import { RENDER_DEFAULTS, renderJson, renderText } from "./render-value.js";

/** A 41-node graph with 2^40 paths: every engine copies it in milliseconds, a naive walk never ends. */
function dag(levels: number): unknown {
  let a: unknown = ["x"];
  for (let i = 0; i < levels; i += 1) a = [a, a];
  return a;
}

const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;
const sparse: unknown[] = [1];
sparse[2] = 3;

describe("renderText and renderJson: one table of values", () => {
  const table: Array<[string, unknown, string, unknown]> = [
    ["bigint", 1n, "1n", { $bigint: "1" }],
    ["NaN", Number.NaN, "NaN", { $number: "NaN" }],
    ["-Infinity", Number.NEGATIVE_INFINITY, "-Infinity", { $number: "-Infinity" }],
    ["-0", -0, "-0", { $number: "-0" }],
    ["undefined", undefined, "undefined", { $undefined: true }],
    ["Map", new Map([[1, 2]]), "Map(1) { 1 => 2 }", { $map: [[1, 2]] }],
    ["Set", new Set(["a"]), "Set(1) { 'a' }", { $set: ["a"] }],
    ["Error", new Error("x"), "[Error: x]", { $error: { name: "Error", message: "x" } }],
    [
      "Error with a property",
      Object.assign(new TypeError("y"), { code: 3 }),
      "[TypeError: y] { code: 3 }",
      { $error: { name: "TypeError", message: "y", code: 3 } },
    ],
    ["cycle", cyclic, "<ref *1> { a: 1, self: [Circular *1] }", { a: 1, self: { $circular: "$" } }],
    ["sparse array", sparse, "[ 1, <1 empty item>, 3 ]", [1, { $hole: true }, 3]],
    ["Date", new Date(0), "1970-01-01T00:00:00.000Z", { $date: "1970-01-01T00:00:00.000Z" }],
    ["RegExp", /a/g, "/a/g", { $regexp: "/a/g" }],
    ["typed array", new Uint8Array([1, 2]), "Uint8Array(2) [ 1, 2 ]", { $Uint8Array: [1, 2] }],
    ["a key starting with $", { $id: 1 }, "{ '$id': 1 }", { $$id: 1 }],
    [
      "plain values",
      { n: 1, s: "a", b: true, z: null },
      "{ n: 1, s: 'a', b: true, z: null }",
      { n: 1, s: "a", b: true, z: null },
    ],
  ];
  it.each(table)("%s", (_name, value, text, json) => {
    expect(renderText(value)).toEqual({ text, truncated: false });
    const rendered = renderJson(value);
    expect(rendered).toEqual({ json, text: JSON.stringify(json), truncated: false });
  });

  it("never prints a stack: a host error's frames name host files", () => {
    const error = new Error("boom");
    expect(error.stack).toContain("render-value.test");
    expect(renderText({ error }).text).toBe("{ error: [Error: boom] }");
    expect(renderJson(error).text).not.toContain("render-value.test");
  });
});

describe("budgets", () => {
  it("a DAG of 2^40 paths renders within the byte budget, promptly, and says it was cut", () => {
    const started = performance.now();
    const text = renderText(dag(40));
    const json = renderJson(dag(40));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(Buffer.byteLength(text.text)).toBeLessThanOrEqual(RENDER_DEFAULTS.maxBytes);
    expect(text.truncated).toBe(true);
    expect(Buffer.byteLength(json.text)).toBeLessThanOrEqual(RENDER_DEFAULTS.maxBytes);
    expect(json.truncated).toBe(true);
    expect(JSON.parse(json.text)).toEqual(json.json);
    expect(json.text).toContain('{"$cut":"Array nested deeper than 16"}');
  });

  it("shows maxDepth levels, then [Array] / [Object] in text and a $cut tag in JSON", () => {
    let nested: unknown = ["x"];
    for (let i = 0; i < 4; i += 1) nested = [nested, { o: 1 }];
    expect(renderText(nested, { maxDepth: 1 })).toEqual({
      text: "[ [ [Array], [Object] ], { o: 1 } ]",
      truncated: true,
    });
    expect(renderJson(nested, { maxDepth: 1 }).json).toEqual([
      [{ $cut: "Array nested deeper than 1" }, { $cut: "Object nested deeper than 1" }],
      { o: 1 },
    ]);
  });

  it("a long array shows its first items and how many it left out, as util.inspect does", () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    const text = renderText(rows, { maxItems: 2 });
    expect(text).toEqual({ text: "[ { i: 0 }, { i: 1 }, ... 199998 more items ]", truncated: true });
    const json = renderJson(rows, { maxNodes: 4 });
    expect(json).toEqual({
      json: [{ i: 0 }, { i: 1 }, { $cut: "199998 more items" }],
      text: '[{"i":0},{"i":1},{"$cut":"199998 more items"}]',
      truncated: true,
    });
  });

  it("maps, sets and objects keep their true size in the header and say what they left out", () => {
    const map = new Map([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(renderText({ map }, { maxItems: 2 }).text).toBe(
      "{ map: Map(3) { 1 => 1, 2 => 2, ... 1 more item } }",
    );
    expect(renderText(new Set([1, 2, 3]), { maxItems: 1 }).text).toBe("Set(3) { 1, ... 2 more items }");
    expect(renderText({ a: 1, b: 2, c: 3 }, { maxNodes: 2 }).text).toBe("{ a: 1, b: 2, ... 1 more key }");
    expect(renderJson({ a: 1, b: 2, c: 3 }, { maxNodes: 2 }).json).toEqual({
      a: 1,
      b: 2,
      $cut: "1 more key",
    });
    expect(renderJson(map, { maxNodes: 1 }).json).toEqual({ $map: [[1, 1], { $cut: "2 more items" }] });
  });

  it("cuts long strings and long text with a marker that counts what went", () => {
    expect(renderText("x".repeat(30), { maxStringLength: 4 })).toEqual({
      text: "'xxxx'... 26 more characters",
      truncated: true,
    });
    expect(renderJson("x".repeat(30), { maxStringLength: 4 }).json).toBe("xxxx... 26 more characters");
    const cut = renderText("é".repeat(100), { maxBytes: 40 });
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(40);
    expect(cut.text).toMatch(/^'é+\n\.\.\. \d+ more bytes cut$/);
  });

  it("a large typed array costs its budget, not its length", () => {
    const bytes = new Uint8Array(64 * 1024 * 1024);
    const started = performance.now();
    expect(renderText(bytes).text).toMatch(
      /^Uint8Array\(67108864\) \[[\s\S]*\.\.\. 67108763 more items\n\]$/,
    );
    expect(renderJson(bytes, { maxNodes: 2 }).json).toEqual({
      $Uint8Array: [0, 0, { $cut: "67108862 more items" }],
    });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("refuses a budget that is not a number >= 1, naming it", () => {
    expect(() => renderText(1, { maxBytes: 0 })).toThrow(
      "render limits: maxBytes must be a number >= 1 (got 0)",
    );
  });
});
