#!/usr/bin/env node
// Compile native/landlock-launcher.c into dist/landlock-launcher with the C
// compiler node-gyp would use ($CC, else `cc`). Never fails the build: when the
// compiler is missing or errors, it writes dist/landlock-launcher.build-error.txt
// and the Landlock probe reports "Landlock launcher could not be built: <error>".
//
//   node scripts/build-launcher.mjs [--out FILE] [--if-stale]
//
// --if-stale skips compiling when FILE is newer than the source (used by tests).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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
  mkdirSync(dirname(out), { recursive: true });
  if (ifStale && existsSync(out) && statSync(out).mtimeMs >= statSync(source).mtimeMs) {
    return { ok: true, out, skipped: true };
  }
  const fail = (error) => {
    writeFileSync(errorFile, `${error}\n`);
    rmSync(out, { force: true });
    return { ok: false, out, error };
  };
  if (process.platform !== "linux")
    return fail(`Landlock is Linux-only (this platform is ${process.platform})`);

  const cc = env.CC?.trim() || "cc";
  const tmp = `${out}.tmp-${process.pid}`;
  const args = ["-std=c11", "-O2", "-Wall", "-Wextra", "-fstack-protector-strong", "-D_FORTIFY_SOURCE=2"];
  const result = spawnSync(cc, [...args, "-o", tmp, relative(packageDir, source)], {
    cwd: packageDir,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (result.error !== undefined || result.status !== 0) {
    rmSync(tmp, { force: true });
    const why =
      result.error !== undefined
        ? `${cc}: ${result.error.code === "ENOENT" ? "C compiler not found (set CC or install cc)" : result.error.message}`
        : `${cc} exited with ${result.status ?? result.signal}: ${firstLines(result.stderr, 6)}`;
    return fail(why);
  }
  chmodSync(tmp, 0o755);
  renameSync(tmp, out);
  rmSync(errorFile, { force: true });
  return { ok: true, out };
}

function firstLines(text, count) {
  const lines = (text ?? "").split("\n").filter((line) => line.trim() !== "");
  return lines.slice(0, count).join(" | ") || "no compiler output";
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
