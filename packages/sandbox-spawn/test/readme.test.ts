import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Docs that run: the README's Usage block, as a user would paste it, against the built package.

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("the Usage example runs and prints what its comments say", async () => {
    const block = /## Usage\n\n```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const source = (block ?? "").replace(
      '"@suaveplan/sandbox-spawn"',
      JSON.stringify(new URL("../dist/index.js", import.meta.url).href),
    );
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", source]);
    expect(
      stdout.replace(/duration: [\d.]+/, "duration: D").replace(/memoryUsed: \d+/, "memoryUsed: M"),
    ).toBe(
      "{\n  duration: D,\n  logs: [ { level: 'log', message: '{ pricing: 10 }' } ],\n  memoryUsed: M,\n  success: true,\n  result: 10.8\n}\nSANDBOX_TIMEOUT\n",
    );
  });
});
