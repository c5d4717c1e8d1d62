// Docs that run: every js/ts/sh block of every README is executed on this Node
// (CI runs the suite on every supported line), as a reader
// would paste it. js blocks run as ES modules beside this package (so
// `@suaveplan/*` imports resolve to the built packages); ts blocks run after
// TypeScript strips their types; sh blocks run with `sh -e` in the repository
// root with the root's node_modules/.bin on PATH (where the Quick start links
// the `suaveplan-sandbox` bin; a global install would put it on PATH too).
// A block that cannot run here is marked `<!-- not-run: reason -->` right
// before it; `<!-- prints -->` before a ```text block after it is the exact
// stdout it must print (durations such as "0.8 ms" normalised).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { extractBlocks, type ReadmeBlock, readmePaths } from "./readme-blocks.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const SNIPPETS = fileURLToPath(new URL("../.snippets", import.meta.url));

function blocks(): ReadmeBlock[] {
  return readmePaths(ROOT).flatMap((readme) =>
    extractBlocks(readme, readFileSync(join(ROOT, readme), "utf8")),
  );
}

function normalise(output: string): string {
  return output
    .replace(/\d+(?:\.\d+)? ms\b/g, "<n> ms")
    .replace(/[ \t]+$/gm, "")
    .trimEnd();
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function runBlock(block: ReadmeBlock, name: string): Run {
  // sh blocks find the CLI where a global install would: the root's node_modules/.bin is on PATH.
  const PATH = `${join(ROOT, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}`;
  const options = {
    cwd: ROOT,
    encoding: "utf8" as const,
    timeout: 110_000,
    env: { ...process.env, PATH, NO_COLOR: "1" },
  };
  if (block.language === "sh") return spawnSync("sh", ["-e", "-c", block.code], options);
  const source =
    block.language === "ts"
      ? ts.transpileModule(block.code, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        }).outputText
      : block.code;
  const file = join(SNIPPETS, `${name}.mjs`);
  writeFileSync(file, source);
  return spawnSync(process.execPath, [...(block.nodeFlags ?? []), file], options);
}

mkdirSync(SNIPPETS, { recursive: true });
afterAll(() => rmSync(SNIPPETS, { recursive: true, force: true }));

const all = blocks();

describe("README code blocks", () => {
  it("finds the blocks of every README, and every skipped one says why", () => {
    expect(all.length).toBeGreaterThanOrEqual(20);
    expect(all.filter((b) => b.notRun !== undefined && b.notRun.trim().length < 10)).toEqual([]);
  });

  const runnable = all.filter((b) => b.notRun === undefined);
  it.each(runnable.map((block) => [`${block.readme}:${block.line} (${block.language})`, block] as const))(
    "%s runs as written",
    (label, block) => {
      const run = runBlock(block, label.replace(/[^a-z0-9]+/gi, "-"));
      const expected = {
        status: block.exitCode ?? 0,
        ...(block.prints === undefined ? {} : { stdout: normalise(block.prints) }),
      };
      const actual = {
        status: run.status,
        ...(block.prints === undefined ? {} : { stdout: normalise(run.stdout) }),
      };
      expect(actual, run.stderr).toEqual(expected);
    },
  );
});
