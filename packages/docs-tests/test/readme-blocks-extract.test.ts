import { describe, expect, it } from "vitest";
import { extractBlocks } from "./readme-blocks.js";

const README = [
  "# Demo",
  "",
  "```js",
  "console.log(2 + 3);",
  "```",
  "",
  "<!-- prints -->",
  "```text",
  "5",
  "```",
  "",
  "<!-- not-run: needs a host we do not have -->",
  "```sh",
  "curl https://example.invalid",
  "```",
  "",
  "<!-- node-flags: --no-node-snapshot --expose-gc -->",
  "<!-- exit-code: 2 -->",
  "```ts",
  "const n: number = 1;",
  "```",
  "",
  "```json",
  '{ "not": "code" }',
  "```",
  "",
  "```text",
  "an unmarked text block is prose, not output",
  "```",
].join("\n");

describe("extractBlocks", () => {
  it("finds js/ts/sh blocks with their markers and the output a <!-- prints --> block declares", () => {
    expect(extractBlocks("README.md", README)).toEqual([
      { readme: "README.md", line: 3, language: "js", code: "console.log(2 + 3);", prints: "5" },
      {
        readme: "README.md",
        line: 13,
        language: "sh",
        code: "curl https://example.invalid",
        notRun: "needs a host we do not have",
      },
      {
        readme: "README.md",
        line: 19,
        language: "ts",
        code: "const n: number = 1;",
        nodeFlags: ["--no-node-snapshot", "--expose-gc"],
        exitCode: 2,
      },
    ]);
  });
});
