#!/usr/bin/env node
// One-shot setup for a machine with only Node >= 20.19 and npm:
// installs the pinned pnpm through npx, points node-gyp at local Node headers
// when this Node ships them (no download needed), installs and builds.
//
//   node scripts/setup.mjs           # every command's output on the terminal (CI)
//   node scripts/setup.mjs --quiet   # one line per phase; full output in setup.log
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

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
  const frozen = env.CI ? ["--frozen-lockfile"] : [];
  reporter.phase("install", () => reporter.run([...pnpm, "install", ...frozen], env));
  reporter.phase("build", () => reporter.run([...pnpm, "build"], env));
  return { pnpm, env };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const quiet = process.argv.includes("--quiet");
  setup(createReporter(quiet ? join(root, "setup.log") : undefined));
}
