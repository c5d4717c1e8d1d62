// A project that installed @suaveplan/sandbox without its optional peer isolated-vm. The umbrella
// and sandbox-isolate are copied (package.json + dist) into a temporary node_modules beside links
// to everything else they import, so Node's resolution from them finds no isolated-vm — as after
// `npm i @suaveplan/sandbox` without the peer. Runs the built code in child processes, in both
// places the isolates can run: helper processes (the default) and the application's own process.
import { execFile } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { isolatedVmInstallHint } from "@suaveplan/sandbox-isolate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const packages = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const rootReadme = join(packages, "..", "README.md");
const project = mkdtempSync(join(tmpdir(), "suaveplan-no-isolated-vm-"));
const nodeModules = join(project, "node_modules");
const COPIED = ["sandbox", "sandbox-isolate"];

/** Every package folder in `dir` (a node_modules), scoped ones as `@scope/name`. */
function installedNames(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (name.startsWith(".")) return [];
    if (!name.startsWith("@")) return [name];
    return readdirSync(join(dir, name)).map((inner) => `${name}/${inner}`);
  });
}

beforeAll(() => {
  for (const name of COPIED) {
    const target = join(nodeModules, "@suaveplan", name);
    mkdirSync(target, { recursive: true });
    cpSync(join(packages, name, "package.json"), join(target, "package.json"));
    cpSync(join(packages, name, "dist"), join(target, "dist"), { recursive: true });
  }
  for (const name of COPIED) {
    const own = join(packages, name, "node_modules");
    for (const dep of installedNames(own)) {
      const link = join(nodeModules, dep);
      if (dep === "isolated-vm" || existsSync(link)) continue;
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(realpathSync(join(own, dep)), link, "dir");
    }
  }
});
afterAll(() => rmSync(project, { recursive: true, force: true }));

// Without NODE_PATH: pnpm's bin shims set it to the workspace's hoisted node_modules/.pnpm/node_modules,
// where require() would find the workspace's isolated-vm. A project that left the peer out has none.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== "NODE_PATH"));

async function node(args: string[], file: string, source: string): Promise<string> {
  writeFileSync(join(project, file), source);
  const { stdout } = await run(process.execPath, [...args, file], { cwd: project, env, timeout: 60_000 });
  return stdout;
}

const nodeMajor = Number(process.versions.node.split(".")[0]);
const placements = [
  ["helper processes (the default, plain node)", [], {}],
  [
    'this process (process: "in-process", --no-node-snapshot)',
    ["--no-node-snapshot"],
    { process: "in-process" },
  ],
] as const;

describe("@suaveplan/sandbox without isolated-vm installed", () => {
  it("has no isolated-vm to resolve from the copied packages", () => {
    expect(existsSync(join(nodeModules, "isolated-vm"))).toBe(false);
    expect(existsSync(join(nodeModules, "@suaveplan", "sandbox-isolate", "dist", "isolate-helper.js"))).toBe(
      true,
    );
  });

  it.each(placements)(
    "an isolate run in %s resolves SANDBOX_ENGINE_UNAVAILABLE with the npm i line; vm still runs",
    async (_label, args, engineOptions) => {
      const stdout = await node(
        [...args],
        "engines.mjs",
        [
          'import { createSandbox } from "@suaveplan/sandbox";',
          `const isolate = createSandbox({ engine: "isolate", engineOptions: ${JSON.stringify(engineOptions)} });`,
          'const vm = createSandbox({ engine: "vm" });',
          'const r = await isolate.execute("6 * 7");',
          'const v = await vm.execute("6 * 7");',
          "await isolate.destroy();",
          "await vm.destroy();",
          "const { success, errorCode, error } = r;",
          "process.stdout.write(JSON.stringify({ isolate: { success, errorCode, error }, vm: v.result }));",
        ].join("\n"),
      );
      const hint = isolatedVmInstallHint(nodeMajor);
      expect(hint).toContain(`npm i isolated-vm@${nodeMajor >= 24 ? 7 : nodeMajor >= 22 ? 6 : 5}`);
      expect(JSON.parse(stdout)).toEqual({
        isolate: {
          success: false,
          errorCode: "SANDBOX_ENGINE_UNAVAILABLE",
          error: `IsolateEngine cannot start: the package isolated-vm is not installed. ${hint} (SANDBOX_ENGINE_UNAVAILABLE)`,
        },
        vm: 42,
      });
    },
    90_000,
  );

  it("the root README's first example prints that error, not `false undefined`", async () => {
    const readme = readFileSync(rootReadme, "utf8");
    const example = /^```js\n([\s\S]*?)\n```$/m.exec(readme)?.[1];
    expect(example).toContain('engine: "isolate"');
    const stdout = await node([], "readme-example.mjs", example as string);
    const hint = isolatedVmInstallHint(nodeMajor);
    expect(stdout.trimEnd().split("\n").at(-1)).toBe(
      `IsolateEngine cannot start: the package isolated-vm is not installed. ${hint} (SANDBOX_ENGINE_UNAVAILABLE) []`,
    );
  }, 90_000);
});
