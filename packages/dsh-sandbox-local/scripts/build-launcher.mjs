#!/usr/bin/env node
// Compile native/landlock-launcher.c into dist/landlock-launcher (run by the
// package build, after tsup). Uses the same compiler invocation as a first-use
// build (dist/launcher-compile.js, from src/landlock/launcher-compile.ts).
// Never fails the build: when the compiler is missing or errors, it writes
// dist/landlock-launcher.build-error.txt and the Landlock probe reports
// "Landlock launcher could not be built: <error>".
//
//   node scripts/build-launcher.mjs [--out FILE] [--if-stale]
//
// --if-stale skips compiling when FILE is newer than the source (used by tests).
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { compileLauncher } from "../dist/launcher-compile.js";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(packageDir, "native", "landlock-launcher.c");

/** Suffix of the file that records why the launcher could not be built. */
export const BUILD_ERROR_SUFFIX = ".build-error.txt";

/**
 * Build the launcher. Returns `{ ok: true, out }` or `{ ok: false, out, error }`;
 * never throws for compiler problems.
 */
export function buildLauncher({
  out = join(packageDir, "dist", "landlock-launcher"),
  ifStale = false,
  env = process.env,
} = {}) {
  const errorFile = `${out}${BUILD_ERROR_SUFFIX}`;
  if (ifStale && existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) {
    return { ok: true, out, skipped: true };
  }
  const result = compileLauncher(source, out, env);
  if (!result.ok) {
    writeFileSync(errorFile, `${result.error}\n`);
    rmSync(out, { force: true });
    return { ok: false, out, error: result.error };
  }
  rmSync(errorFile, { force: true });
  return { ok: true, out };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const outIndex = argv.indexOf("--out");
  const options = { ifStale: argv.includes("--if-stale") };
  if (outIndex !== -1 && argv[outIndex + 1] !== undefined) options.out = resolve(argv[outIndex + 1]);
  const result = buildLauncher(options);
  if (!result.ok) {
    console.warn(
      `build-launcher: Landlock launcher not built (the landlock backends will report unavailable): ${result.error}`,
    );
  }
}
