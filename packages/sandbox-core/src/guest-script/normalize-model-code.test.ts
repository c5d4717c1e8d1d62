import * as vm from "node:vm";
import { describe, expect, it } from "vitest";
import { toGuestScript } from "./guest-script.js";
import { normalizeModelCode } from "./normalize-model-code.js";

/** Run normalised code the way engines do (async wrapper included) and return its value. */
const run = async (code: string): Promise<unknown> =>
  vm.runInNewContext(toGuestScript(normalizeModelCode(code).code).source, {});

describe("normalizeModelCode", () => {
  it("returns ordinary code unchanged with no changes", () => {
    for (const code of [
      "1 + 1",
      "const a = await 1; a",
      "function main() {}\nmain()",
      "const t = `\n\\`\\`\\`\n`; t",
    ]) {
      expect(normalizeModelCode(code)).toEqual({ code, changes: [] });
    }
  });

  it("takes the code out of Markdown fences and keeps its line numbers", async () => {
    expect(normalizeModelCode("```js\nconst a = 2;\na * 21\n```")).toEqual({
      code: "\nconst a = 2;\na * 21",
      changes: ["removed the Markdown fences (```js) around the code"],
    });
    expect(normalizeModelCode("~~~javascript\n40 + 2\n~~~\n").code).toBe("\n40 + 2");
    expect(normalizeModelCode("```\n40 + 2\n```").changes).toEqual([
      "removed the Markdown fences (```) around the code",
    ]);
    await expect(run("```js\nconst v = await Promise.resolve(41);\nv + 1\n```")).resolves.toBe(42);
  });

  it("takes one block out of the prose around it", async () => {
    const reply = "Here is the code:\n\n```javascript\n6 * 7\n```\n\nIt prints 42.";
    expect(normalizeModelCode(reply)).toEqual({
      code: "\n\n\n6 * 7",
      changes: ["took the code out of its Markdown code block and dropped the text around it"],
    });
  });

  it("joins several JavaScript blocks in order and drops blocks in other languages", async () => {
    const reply =
      "Step 1:\n```js\nconst a = 40;\n```\nInstall:\n```bash\nnpm i x\n```\nStep 2:\n```js\na + 2\n```";
    expect(normalizeModelCode(reply)).toEqual({
      code: "\n\nconst a = 40;\n\n\n\n\n\n\n\na + 2",
      changes: [
        "joined the code of 2 Markdown code blocks in order and dropped the text around them",
        "dropped 1 code block in another language (bash)",
      ],
    });
    await expect(run(reply)).resolves.toBe(42);
  });

  it("only unwraps a TypeScript fence and says the types stay", () => {
    expect(normalizeModelCode("```ts\nconst a: number = 1;\na\n```")).toEqual({
      code: "\nconst a: number = 1;\na",
      changes: [
        "removed the Markdown fences (```ts) around the code",
        "left TypeScript types in place (the fence said TypeScript; the sandbox runs JavaScript)",
      ],
    });
  });

  it("makes `export default <expression>` the result", async () => {
    expect(normalizeModelCode("const a = 1;\nexport default { a };")).toEqual({
      code: "const a = 1;\n({ a });",
      changes: ["made the `export default` expression the result"],
    });
    await expect(run("export const b = 2;\nexport default b * 21;")).resolves.toBe(42);
  });

  it("calls and awaits a default-exported function", async () => {
    const code = "export default async function main() {\n  return await Promise.resolve(42);\n}";
    expect(normalizeModelCode(code)).toEqual({
      code: "async function main() {\n  return await Promise.resolve(42);\n}\nawait main();",
      changes: ["called and awaited the default-exported function main()"],
    });
    await expect(run(code)).resolves.toBe(42);
    await expect(run("export default async () => 'anon'")).resolves.toBe("anon");
  });

  it("calls and awaits a main that is declared but never called", async () => {
    const code = "async function main() {\n  const x = await Promise.resolve(6);\n  return x * 7;\n}";
    expect(normalizeModelCode(code)).toEqual({
      code: `${code}\nawait main();`,
      changes: ["called and awaited main(), which was declared but never called"],
    });
    await expect(run(code)).resolves.toBe(42);
    await expect(run("const k = 2;\nconst main = () => k * 21;")).resolves.toBe(42);
    // Called already, or referenced: left alone.
    expect(normalizeModelCode("function main() { return 1 }\nmain();").changes).toEqual([]);
    expect(normalizeModelCode("function main() { return 1 }\nconst f = main;").changes).toEqual([]);
  });

  it("calls and awaits a lone function or arrow expression", async () => {
    expect(normalizeModelCode("async () => {\n  return 42;\n}")).toEqual({
      code: "await (async () => {\n  return 42;\n})()",
      changes: ["called and awaited the lone function expression"],
    });
    await expect(run("(function () { return 'fn'; })")).resolves.toBe("fn");
    await expect(run("async function () { return 'unnamed'; }")).resolves.toBe("unnamed");
  });

  it("unwraps fences and then reshapes what was inside", async () => {
    const reply = "```js\nasync function main() {\n  return 'both';\n}\n```";
    expect(normalizeModelCode(reply).changes).toEqual([
      "removed the Markdown fences (```js) around the code",
      "called and awaited main(), which was declared but never called",
    ]);
    await expect(run(reply)).resolves.toBe("both");
  });

  it("leaves code with imports and other-language blocks unchanged", () => {
    for (const code of ["import x from 'y';\nexport default x;", "```python\nprint(1)\n```"]) {
      expect(normalizeModelCode(code)).toEqual({ code, changes: [] });
    }
  });
});
