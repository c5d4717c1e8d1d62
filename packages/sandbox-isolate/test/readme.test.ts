import { readFileSync } from "node:fs";
import { format } from "node:util";
import { expect, it } from "vitest";
import { IsolateEngine } from "../src/index.js";

// Docs that run: the README's Usage `js` block is executed as written (its import
// bound to this package's source), and each `console.log(…); // expected` line
// must print exactly its comment.

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const usage = /## Usage\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
const IMPORT = 'import { IsolateEngine } from "@suaveplan/sandbox-isolate";\n';
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
  ...args: string[]
) => (...values: unknown[]) => Promise<void>;

it("the README Usage block runs and prints what its comments say", async () => {
  expect(usage.startsWith(IMPORT)).toBe(true);
  const expected = [...usage.matchAll(/^\s*console\.log\(.*\); \/\/ (.*)$/gm)].map(
    (match) => match[1] as string,
  );
  const printed: string[] = [];
  const capture = { log: (...args: unknown[]) => printed.push(format(...args)) };
  await new AsyncFunction("IsolateEngine", "console", usage.slice(IMPORT.length))(IsolateEngine, capture);
  expect(expected).toHaveLength(4);
  expect(printed).toStrictEqual(expected);
});
