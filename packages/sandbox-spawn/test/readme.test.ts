import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// Docs that run: the README's code blocks, as a user would paste them, against the built package.

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** Run the `js` block under `heading` with the package name pointing at the build; its stdout. */
async function runBlock(heading: string): Promise<string> {
  const block = new RegExp(`${heading}\\n\\n\`\`\`js\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  expect(block).toBeDefined();
  const source = (block ?? "").replace(
    '"@suaveplan/sandbox-spawn"',
    JSON.stringify(new URL("../dist/index.js", import.meta.url).href),
  );
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", source]);
  return stdout;
}

describe("README", () => {
  it("the Usage example runs and prints what its comments say", async () => {
    const stdout = await runBlock("## Usage");
    expect(
      stdout
        .replace(/duration: [\d.]+/, "duration: D")
        .replace(/usage: \{[^}]*\}/, "usage: U")
        .replace(/memoryUsed: \d+/, "memoryUsed: M"),
    ).toBe(
      "{\n  duration: D,\n  logs: [ { level: 'log', message: '{ pricing: 10 }' } ],\n  usage: U,\n  memoryUsed: M,\n  success: true,\n  result: 10.8\n}\nSANDBOX_TIMEOUT\n",
    );
  });

  it("the host calls, cancellation and usage example runs and prints what its comments say", async () => {
    expect(await runBlock("### Host calls, cancellation and usage")).toBe(
      "[ 19, true ] 1\nSANDBOX_CANCELLED\n",
    );
  });
});
