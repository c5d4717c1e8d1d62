import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import type { ConfinedSandboxMode, SandboxEnforcement } from "@suaveplan/dsh-sandbox";
import { LANDLOCK_LAUNCHER_PREFIX, LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE } from "./landlock-dialect.js";
import { ensureLauncherBuilt } from "./launcher-locate.js";
import { launcherBuildError } from "./launcher-path.js";

/** What checking the launcher and the kernel found: a usable ABI, or why not. */
export type LauncherCheck = { ok: true; abi: number } | { ok: false; reason: string };

/** Outcome of one synchronous probe run. */
export interface ProbeRun {
  ok: boolean;
  /** First meaningful stderr line, or how the run failed to start. */
  detail: string;
}

/** Architectures the launcher's seccomp socket filter (network deny) knows. */
const SECCOMP_ARCHES: ReadonlySet<string> = new Set(["x64", "arm64"]);

/** True when the launcher has a seccomp filter for this CPU (`--deny-net`, `--freeze-metadata`). */
export function launcherHasSeccomp(): boolean {
  return SECCOMP_ARCHES.has(process.arch);
}

/** True when the launcher can enforce `--deny-net` at this ABI on this CPU. */
export function launcherCanDenyNetwork(abi: number): boolean {
  return abi >= 4 && launcherHasSeccomp();
}

/**
 * Is the launcher built (building one that `landlockLauncherPath()` chose
 * on first use), and does this kernel support Landlock? Asks the
 * launcher itself (`--abi`), so the answer covers seccomp filters and LSM
 * configuration as the confined command will meet them.
 */
export function checkLauncher(launcherPath: string, timeoutMs: number): LauncherCheck {
  if (process.platform !== "linux") {
    return { ok: false, reason: `Landlock is a Linux security module; this host runs ${process.platform}` };
  }
  const notBuilt = ensureLauncherBuilt(launcherPath);
  if (notBuilt !== undefined) return { ok: false, reason: notBuilt };
  if (!existsSync(launcherPath)) {
    const buildError = launcherBuildError(launcherPath);
    return {
      ok: false,
      reason:
        buildError === undefined
          ? "Landlock launcher is not built: run the package build (tsup && node scripts/build-launcher.mjs) with a C compiler (cc or $CC) available"
          : `Landlock launcher could not be built: ${buildError}`,
    };
  }
  if (!isExecutable(launcherPath)) {
    return {
      ok: false,
      reason:
        "Landlock launcher is not executable; install the package with a package manager that keeps its mode bit (npm, pnpm), or pass a launcherPath you built",
    };
  }
  const run = spawnSync(launcherPath, ["--abi"], {
    encoding: "utf8",
    timeout: timeoutMs,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (run.error !== undefined) {
    const code = (run.error as NodeJS.ErrnoException).code ?? run.error.message;
    return {
      ok: false,
      reason: `Landlock launcher cannot run on this host (${code}); rebuild it here with the package build`,
    };
  }
  if (run.status !== 0) {
    return { ok: false, reason: launcherFailureText(run.stderr, run.status, run.signal) };
  }
  const abi = Number.parseInt(run.stdout.trim(), 10);
  if (!Number.isInteger(abi) || abi < 1) {
    return {
      ok: false,
      reason: `Landlock launcher reported no usable ABI (${JSON.stringify(run.stdout.trim())})`,
    };
  }
  return { ok: true, abi };
}

/** True when this process may execute `path`. Never changes its mode. */
function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Run a trivial confined command (`true`) exactly as a consumer would spawn it. */
export function runProbeCommand(argv: readonly string[], timeoutMs: number): ProbeRun {
  const [program, ...args] = argv;
  if (program === undefined) return { ok: false, detail: "empty probe argv" };
  const run = spawnSync(program, args, {
    encoding: "utf8",
    timeout: timeoutMs,
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (run.error !== undefined) {
    const code = (run.error as NodeJS.ErrnoException).code ?? run.error.message;
    return { ok: false, detail: `${code === "ETIMEDOUT" ? `timed out after ${timeoutMs} ms` : code}` };
  }
  if (run.status === 0) return { ok: true, detail: "" };
  return { ok: false, detail: launcherFailureText(run.stderr, run.status, run.signal) };
}

/** Why Landlock alone cannot freeze metadata: it has no access rights for it. */
export const METADATA_GAP =
  "Landlock does not govern chmod, chgrp, timestamps, extended attributes or inode flags, so the metadata of files the caller owns outside the writable roots can change";

/**
 * Enforcement of the plain `landlock` backend for one mode. Read-only is
 * `full` at ABI >= 3 when the seccomp metadata filter is available;
 * workspace-write is always `partial` (see {@link METADATA_GAP}): metadata
 * syscalls cannot be refused outside the roots while allowed inside them.
 */
export function landlockEnforcement(
  abi: number,
  mode: ConfinedSandboxMode,
  seccomp: boolean,
): { enforcement: SandboxEnforcement; reason?: string } {
  const gaps: string[] = [];
  if (abi < 3)
    gaps.push(
      `kernel Landlock ABI ${abi} lacks TRUNCATE (ABI 3): truncate(2) of a file outside the writable roots is not governed`,
    );
  if (abi < 2)
    gaps.push(
      "it lacks REFER (ABI 2): every rename or link across directories is refused, even inside the workspace",
    );
  if (mode === "workspace-write") gaps.push(METADATA_GAP);
  else if (!seccomp) gaps.push(`${METADATA_GAP} (no seccomp metadata filter here)`);
  return gaps.length === 0 ? { enforcement: "full" } : { enforcement: "partial", reason: gaps.join("; ") };
}

function launcherFailureText(stderr: string, status: number | null, signal: NodeJS.Signals | null): string {
  const lines = stderr.split("\n").map((line) => line.trim());
  const line = lines.find((l) => l.startsWith(LANDLOCK_LAUNCHER_PREFIX)) ?? lines.find((l) => l !== "");
  const text =
    line === undefined
      ? ""
      : line.startsWith(LANDLOCK_LAUNCHER_PREFIX)
        ? line.slice(LANDLOCK_LAUNCHER_PREFIX.length).trim()
        : line;
  const how =
    status === LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE
      ? "launcher setup failed"
      : status !== null
        ? `exit status ${status}`
        : `signal ${signal ?? "unknown"}`;
  return text === "" ? how : `${text} (${how})`;
}
