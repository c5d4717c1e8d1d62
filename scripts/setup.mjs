#!/usr/bin/env node
// One-shot setup for a machine with only Node >= 20.19 and npm:
// installs the pinned pnpm through npx, points node-gyp at local Node headers
// when this Node ships them (no download needed), installs and builds.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
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

/** Run a command in the repo root, inheriting stdio; exit on failure. */
export function run(argv, env = process.env) {
  console.log(`$ ${argv.join(" ")}`);
  const result = spawnSync(argv[0], argv.slice(1), { cwd: root, stdio: "inherit", env });
  if (result.status !== 0) {
    console.error(`setup: ${argv.join(" ")} failed with ${result.status ?? result.signal}`);
    process.exit(result.status ?? 1);
  }
}

export function setup() {
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    console.error(`setup: Node >= 20.19 is required (this is ${process.version}).`);
    process.exit(1);
  }
  const env = { ...process.env };
  const headers = detectNodeHeaders(env);
  if (headers) {
    env.npm_config_nodedir = headers;
    console.log(`setup: node-gyp uses local Node headers under ${headers}`);
  } else {
    console.log("setup: no local Node headers found; node-gyp will fetch them if it needs to");
  }
  const pnpm = pnpmCommand();
  const frozen = env.CI ? ["--frozen-lockfile"] : [];
  run([...pnpm, "install", ...frozen], env);
  run([...pnpm, "build"], env);
  return { pnpm, env };
}

if (import.meta.url === `file://${process.argv[1]}`) setup();
