#!/usr/bin/env node
// One-shot setup for a machine with only Node >= 20.19 and npm:
// installs the pinned pnpm through npx, points node-gyp at local Node headers
// when this Node ships them (no download needed), installs and builds.
// On a Node line whose isolated-vm is not the catalog's (ISOLATED_VM_BY_NODE_LINE),
// it installs that line's version and then puts pnpm-workspace.yaml and
// pnpm-lock.yaml back as they were, so the working tree stays clean.
//
//   node scripts/setup.mjs           # every command's output on the terminal (CI)
//   node scripts/setup.mjs --quiet   # one line per phase; full output in setup.log
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/**
 * The isolated-vm each Node line installs and is tested with, where it is not
 * the pnpm catalog's pin (5.x, which builds from source on Node 20 and 22 and
 * not at all against Node 24's headers). A line not listed takes the entry of
 * the nearest lower line listed, or the catalog's pin below them all. With
 * Node 20 on the catalog's 5.x, CI covers every major of the peer range
 * `^5 || ^6 || ^7` (README "Node lines").
 */
export const ISOLATED_VM_BY_NODE_LINE = Object.freeze({ 22: "6.2.0", 24: "7.0.1" });

/** The isolated-vm version Node `nodeMajor` installs instead of the catalog's, or `undefined` for the catalog's. */
export function isolatedVmForNodeLine(nodeMajor, table = ISOLATED_VM_BY_NODE_LINE) {
  const lines = Object.keys(table)
    .map(Number)
    .filter((line) => line <= nodeMajor)
    .sort((a, b) => b - a);
  return lines.length === 0 ? undefined : table[lines[0]];
}

const CATALOG_ENTRY = /^(\s+isolated-vm:\s*)(\d[^\s#]*)[^\n]*$/m;

/** The isolated-vm version pinned by the catalog of pnpm-workspace.yaml's text. */
export function catalogIsolatedVm(workspaceYaml) {
  // The catalog's entry is the one whose value is a version (allowBuilds has `true`).
  const match = CATALOG_ENTRY.exec(workspaceYaml);
  if (match === null) throw new Error("pnpm-workspace.yaml has no isolated-vm catalog entry");
  return match[2];
}

/** pnpm-workspace.yaml's text with the catalog's isolated-vm set to `version`. */
export function withCatalogIsolatedVm(workspaceYaml, version) {
  catalogIsolatedVm(workspaceYaml);
  return workspaceYaml.replace(CATALOG_ENTRY, `$1${version}`);
}

/** The pnpm command pinned by package.json's packageManager field. */
export function pnpmCommand() {
  return ["npx", "-y", packageManager];
}

/**
 * A Node headers directory for node-gyp: an explicit npm_config_nodedir wins;
 * otherwise the install prefix of the running Node when it holds
 * include/node/common.gypi (distribution packages ship headers there).
 */
export function detectNodeHeaders(env = process.env, execPath = process.execPath) {
  const explicit = env.npm_config_nodedir || env.NPM_CONFIG_NODEDIR;
  if (explicit && existsSync(join(explicit, "include", "node", "common.gypi"))) return explicit;
  const prefix = dirname(dirname(execPath));
  if (existsSync(join(prefix, "include", "node", "common.gypi"))) return prefix;
  return undefined;
}

/**
 * Where commands write. `log === undefined`: everything on the terminal.
 * Otherwise every command's output goes to the file `log` and the terminal
 * gets only `phase()` lines and failures.
 */
export function createReporter(log) {
  if (log !== undefined) writeFileSync(log, `# ${new Date().toISOString()} ${process.version}\n`);
  const note = (line) => (log === undefined ? console.log(line) : appendFileSync(log, `${line}\n`));
  return {
    log,
    note,
    /** Run a command in the repo root; exit with its status on failure. */
    run(argv, env = process.env) {
      note(`$ ${argv.join(" ")}`);
      const result = spawnSync(argv[0], argv.slice(1), {
        cwd: root,
        env,
        stdio: log === undefined ? "inherit" : ["ignore", "pipe", "pipe"],
        encoding: "utf8",
        maxBuffer: 256 * 1024 * 1024,
      });
      if (log !== undefined) appendFileSync(log, `${result.stdout ?? ""}${result.stderr ?? ""}`);
      if (result.status !== 0) {
        const where = log === undefined ? "" : `; full output in ${relative(process.cwd(), log) || log}`;
        console.error(`setup: ${argv.join(" ")} failed with ${result.status ?? result.signal}${where}`);
        process.exit(result.status ?? 1);
      }
    },
    /** Run `fn` as one named phase: a single progress line in quiet mode. */
    phase(name, fn) {
      const started = performance.now();
      if (log !== undefined) process.stdout.write(`${name}… `);
      fn();
      if (log !== undefined) console.log(`done (${((performance.now() - started) / 1000).toFixed(1)} s)`);
    },
  };
}

/** Check Node, then install and build. Returns the pnpm command and the environment used. */
export function setup(reporter = createReporter(undefined)) {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    console.error(`setup: Node >= 20.19 is required (this is ${process.version}).`);
    process.exit(1);
  }
  const env = { ...process.env };
  const headers = detectNodeHeaders(env);
  if (headers) {
    env.npm_config_nodedir = headers;
    reporter.note(`setup: node-gyp uses local Node headers under ${headers}`);
  } else {
    reporter.note("setup: no local Node headers found; node-gyp will fetch them if it needs to");
  }
  const pnpm = pnpmCommand();
  const workspaceFile = join(root, "pnpm-workspace.yaml");
  const catalog = catalogIsolatedVm(readFileSync(workspaceFile, "utf8"));
  const line = isolatedVmForNodeLine(major);
  if (line === undefined || line === catalog) {
    const frozen = env.CI ? ["--frozen-lockfile"] : [];
    reporter.phase("install", () => reporter.run([...pnpm, "install", ...frozen], env));
  } else {
    const why = `isolated-vm ${line} for Node ${major}; the catalog pins ${catalog}`;
    const tracked = [workspaceFile, join(root, "pnpm-lock.yaml")];
    reporter.note(`setup: installing ${why}; pnpm-workspace.yaml and pnpm-lock.yaml are put back afterwards`);
    withFilesRestored(tracked, () => {
      writeFileSync(workspaceFile, withCatalogIsolatedVm(readFileSync(workspaceFile, "utf8"), line));
      // The catalog changed, so does the lockfile: not frozen, even on CI.
      reporter.phase(`install (${why})`, () =>
        reporter.run([...pnpm, "install", "--no-frozen-lockfile"], env),
      );
    });
    markInstallCurrent(catalog, tracked);
    console.log(
      `setup: installed ${why}; pnpm-workspace.yaml and pnpm-lock.yaml are back as they were, byte for byte (git status shows no change).\n` +
        "setup: after a pull that changes dependencies, run this again rather than pnpm install (which would build the catalog's isolated-vm)",
    );
  }
  reporter.phase("build", () => reporter.run([...pnpm, "build"], env));
  return { pnpm, env };
}

/**
 * Run `fn`, then write `files` back with the bytes they had before it — also
 * when a command fails (`reporter.run` exits) or the user interrupts.
 */
function withFilesRestored(files, fn) {
  const saved = files.filter((file) => existsSync(file)).map((file) => [file, readFileSync(file)]);
  const restore = () => {
    for (const [file, bytes] of saved) writeFileSync(file, bytes);
  };
  const interrupted = (signal) => {
    restore();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.on("exit", restore);
  process.on("SIGINT", interrupted);
  process.on("SIGTERM", interrupted);
  try {
    fn();
  } finally {
    restore();
    process.off("exit", restore);
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
  }
}

/**
 * Tell pnpm that node_modules is current for the restored pnpm-workspace.yaml.
 * pnpm (12.4.2, pinned) checks before every `pnpm run`/`test`/`exec` that
 * node_modules was installed for the workspace's settings as they are now
 * (`verifyDepsBeforeRun`), and would otherwise reinstall the catalog's
 * isolated-vm on the next `pnpm test`. Its record of what it installed for is
 * node_modules/.pnpm-workspace-state-v1.json: the catalog there becomes the
 * committed one, validated after the restored files were written.
 */
function markInstallCurrent(catalogVersion, restoredFiles) {
  const file = join(root, "node_modules", ".pnpm-workspace-state-v1.json");
  const state = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
  const catalog = state?.settings?.catalogs?.default;
  if (typeof state?.lastValidatedTimestamp !== "number" || typeof catalog?.["isolated-vm"] !== "string") {
    console.error(
      `setup: ${relative(root, file)} is not what pnpm ${packageManager} writes; the next pnpm command will reinstall the catalog's isolated-vm`,
    );
    process.exit(1);
  }
  catalog["isolated-vm"] = catalogVersion;
  const written = Math.max(...restoredFiles.filter((f) => existsSync(f)).map((f) => statSync(f).mtimeMs));
  state.lastValidatedTimestamp = Math.max(Date.now(), Math.ceil(written) + 1);
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quiet = process.argv.includes("--quiet");
  setup(createReporter(quiet ? join(root, "setup.log") : undefined));
}
