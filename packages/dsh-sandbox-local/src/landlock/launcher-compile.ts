import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname } from "node:path";

/** Flags every launcher build uses: the package build and a first-use build alike. */
export const LAUNCHER_CFLAGS: readonly string[] = [
  "-std=c11",
  "-O2",
  "-Wall",
  "-Wextra",
  "-fstack-protector-strong",
  "-D_FORTIFY_SOURCE=2",
];

/** Outcome of {@link compileLauncher}: the launcher at `out`, or the compiler's complaint. */
export type CompileResult = { ok: true } | { ok: false; error: string };

/**
 * Compile the launcher's C source into `out` with `$CC` (else `cc`). Writes a
 * temporary file beside `out` and renames it into place, so a concurrent
 * reader never sees half a binary. The compiler creates the file executable;
 * nothing is chmod-ed. Never throws for compiler problems.
 */
export function compileLauncher(
  source: string,
  out: string,
  env: NodeJS.ProcessEnv = process.env,
): CompileResult {
  if (process.platform !== "linux") {
    return { ok: false, error: `Landlock is Linux-only (this platform is ${process.platform})` };
  }
  const cc = env.CC?.trim() || "cc";
  const tmp = `${out}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(out), { recursive: true });
  } catch (error) {
    return { ok: false, error: `cannot create ${dirname(out)} (${(error as NodeJS.ErrnoException).code})` };
  }
  const result = spawnSync(cc, [...LAUNCHER_CFLAGS, "-o", tmp, source], {
    cwd: dirname(out),
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  if (result.error !== undefined || result.status !== 0) {
    rmSync(tmp, { force: true });
    const code = (result.error as NodeJS.ErrnoException | undefined)?.code;
    return {
      ok: false,
      error:
        result.error !== undefined
          ? `${cc}: ${code === "ENOENT" ? "C compiler not found (set CC or install cc)" : result.error.message}`
          : `${cc} exited with ${result.status ?? result.signal}: ${firstLines(result.stderr, 6)}`,
    };
  }
  try {
    accessSync(tmp, constants.X_OK);
  } catch {
    rmSync(tmp, { force: true });
    return { ok: false, error: `${cc} produced a file that is not executable (check the umask)` };
  }
  renameSync(tmp, out);
  return { ok: true };
}

function firstLines(text: string | undefined, count: number): string {
  const lines = (text ?? "").split("\n").filter((line) => line.trim() !== "");
  return lines.slice(0, count).join(" | ") || "no compiler output";
}
