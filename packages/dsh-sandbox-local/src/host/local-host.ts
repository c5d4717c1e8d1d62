import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { release } from "node:os";
import { delimiter, isAbsolute, join } from "node:path";

/** Result of {@link LocalHost.run}. */
export interface HostRunResult {
  /** Exit code, or `null` when the process died on a signal or never started. */
  status: number | null;
  stdout: string;
  stderr: string;
  /** Set when the program could not be started at all (e.g. `ENOENT`). */
  errorCode?: string;
}

/**
 * The host capabilities the local backends use to probe. {@link nodeLocalHost}
 * is the real one; tests pass a fake only for what cannot run here (macOS,
 * Windows, a kernel that forbids user namespaces).
 */
export interface LocalHost {
  /** `process.platform`. */
  readonly platform: NodeJS.Platform;
  /** Effective uid (`undefined` on Windows). */
  readonly uid: number | undefined;
  /** Kernel release string (`os.release()`). */
  readonly kernelRelease: string;
  /** Run a program synchronously with a timeout (ms), stdin ignored. */
  run(file: string, args: readonly string[], timeoutMs: number): HostRunResult;
  /** Read a small text file; `undefined` when it cannot be read. */
  readText(path: string): string | undefined;
  /** Whether `path` exists. */
  exists(path: string): boolean;
  /** Absolute path of an executable on `PATH` (or `name` itself when absolute and executable). */
  findExecutable(name: string): string | undefined;
  /** An environment variable of the host process. */
  env(name: string): string | undefined;
}

/** The real host, backed by `node:child_process`, `node:fs` and `node:os`. */
export const nodeLocalHost: LocalHost = {
  platform: process.platform,
  uid: typeof process.geteuid === "function" ? process.geteuid() : undefined,
  kernelRelease: release(),
  run(file, args, timeoutMs) {
    const r = spawnSync(file, [...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: timeoutMs,
      killSignal: "SIGKILL",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C", LC_ALL: "C" },
    });
    const result: HostRunResult = { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
    const code = (r.error as NodeJS.ErrnoException | undefined)?.code;
    if (code !== undefined) result.errorCode = code;
    return result;
  },
  readText(path) {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
  exists(path) {
    return existsSync(path);
  },
  findExecutable(name) {
    const candidates = isAbsolute(name)
      ? [name]
      : (process.env.PATH ?? "")
          .split(delimiter)
          .filter((dir) => isAbsolute(dir))
          .map((dir) => join(dir, name));
    for (const candidate of candidates) {
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here; keep looking
      }
    }
    return undefined;
  },
  env(name) {
    return process.env[name];
  },
};
