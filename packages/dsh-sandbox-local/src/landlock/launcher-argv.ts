import { isAbsolute } from "node:path";
import { SandboxPolicyError, SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { BackendProbeResult, LocalBackendName, LocalConfinePolicy } from "../backend/index.js";

/** The writable roots a policy grants: none under `read-only`; the workspace and temp area under `workspace-write`. */
export function writableRoots(policy: LocalConfinePolicy): string[] {
  if (policy.mode !== "workspace-write") return [];
  const roots = [policy.workspaceRoot];
  if (policy.tempDir !== undefined && policy.tempDir !== policy.workspaceRoot) roots.push(policy.tempDir);
  for (const root of policy.writableRoots ?? []) if (!roots.includes(root)) roots.push(root);
  return roots;
}

/** True when `path` is `root` or lies beneath it (both absolute, canonical). */
export function isWithin(path: string, root: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return path.startsWith(prefix);
}

/** Protected paths that overlap a writable root (inside it, or containing it). */
export function protectedPathsAtRisk(policy: LocalConfinePolicy): string[] {
  const roots = writableRoots(policy);
  return policy.protectedPaths.filter((p) => roots.some((root) => isWithin(p, root) || isWithin(root, p)));
}

/**
 * Check what every Landlock-based wrap needs, returning the probed ABI.
 * Throws `SandboxUnavailableError` when the probe said no, and a
 * `SANDBOX_INVALID_POLICY` error for a policy no backend could honour.
 */
export function checkWrapInputs(
  backend: LocalBackendName,
  argv: readonly string[],
  policy: LocalConfinePolicy,
  probe: BackendProbeResult,
): number {
  if (probe.backend !== backend || !probe.available) {
    throw new SandboxUnavailableError(
      `The ${backend} backend cannot confine here: ${probe.reason ?? "its probe did not succeed"}. Use another backend or fix the host`,
    );
  }
  const abi = probe.facts?.landlockAbi;
  if (typeof abi !== "number" || !Number.isInteger(abi) || abi < 1) {
    throw new SandboxUnavailableError(
      `The ${backend} backend cannot confine here: its probe result carries no Landlock ABI (facts.landlockAbi). Pass the result of this backend's own probe()`,
    );
  }
  if (argv.length === 0 || argv[0] === "") {
    throw new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, "argv must name a program to run; it is empty");
  }
  if (policy.mode !== "read-only" && policy.mode !== "workspace-write") {
    throw new SandboxPolicyError(
      `policy.mode must be "read-only" or "workspace-write" to be confined; "danger-full-access" callers spawn their own argv`,
    );
  }
  for (const [field, value] of [
    ["policy.workspaceRoot", policy.workspaceRoot],
    ["policy.tempDir", policy.tempDir],
    ...policy.protectedPaths.map((p) => ["policy.protectedPaths[]", p] as const),
  ] as const) {
    if (value !== undefined && (!isAbsolute(value) || value.includes("\0"))) {
      throw new SandboxPolicyError(`${field} must be an absolute, canonical path`);
    }
  }
  return abi;
}

/**
 * Launcher flags added beside `--proxy-env`: `NODE_USE_ENV_PROXY=1`, so Node's
 * own `fetch` and `http` honour `HTTP(S)_PROXY` (Node >= 22.21 and >= 24.5;
 * older Node ignores both and cannot reach the allow-listed hosts by itself).
 */
export const PROXY_ENV_EXTRA: readonly string[] = Object.freeze(["--setenv", "NODE_USE_ENV_PROXY", "1"]);

/** Which `socket(2)` families the launcher's seccomp filter lets through (`--sockets`). */
export type LauncherSocketPolicy = "none" | "unix" | "unix+inet" | "tcp";

/** Seccomp-backed launcher features for one call. */
export interface LauncherFlags {
  /** `--deny-net`: Landlock TCP rules plus the non-unix socket filter. */
  denyNetwork: boolean;
  /** `--freeze-metadata`: refuse chmod/chown/utimes/xattr/chattr everywhere (read-only mode). */
  freezeMetadata: boolean;
  /** `--sockets`: the socket families allowed (not with `denyNetwork`, which refuses every one). */
  sockets?: LauncherSocketPolicy | undefined;
  /** `--allow-tcp-connect`: with Landlock TCP rules, the one port the command may connect to. */
  allowTcpConnect?: number | undefined;
  /** `--bridge`: relay 127.0.0.1:port (0: a free port) to this UNIX socket. */
  bridge?: { port: number; socket: string } | undefined;
  /** `--proxy-env`: point HTTP_PROXY and friends at the bridge (and set `NODE_USE_ENV_PROXY=1`). */
  proxyEnv?: boolean | undefined;
}

/**
 * The launcher's own argv: ABI floor, writable roots, seccomp flags, the
 * private temp area as `TMPDIR` (so the argv is self-sufficient: a consumer
 * that spawns it without merging `env` still gets a working `mktemp`),
 * separator, then the command.
 */
export function launcherArgv(
  launcherPath: string,
  abi: number,
  argv: readonly string[],
  policy: LocalConfinePolicy,
  flags: LauncherFlags,
): string[] {
  const out = [launcherPath, "--min-abi", String(abi)];
  for (const root of writableRoots(policy)) out.push("--rw", root);
  if (flags.denyNetwork) out.push("--deny-net");
  if (flags.freezeMetadata) out.push("--freeze-metadata");
  if (flags.sockets !== undefined && !flags.denyNetwork) out.push("--sockets", flags.sockets);
  if (flags.allowTcpConnect !== undefined) out.push("--allow-tcp-connect", String(flags.allowTcpConnect));
  if (flags.bridge !== undefined) out.push("--bridge", `${flags.bridge.port}:${flags.bridge.socket}`);
  if (flags.proxyEnv === true) out.push("--proxy-env", ...PROXY_ENV_EXTRA);
  const env = tempEnv(policy);
  if (env !== undefined) for (const [name, value] of Object.entries(env)) out.push("--setenv", name, value);
  out.push("--", ...argv);
  return out;
}

/** `TMPDIR` of the private temp area, when `workspace-write` has one. */
export function tempEnv(policy: LocalConfinePolicy): Readonly<Record<string, string>> | undefined {
  return policy.mode === "workspace-write" && policy.tempDir !== undefined
    ? { TMPDIR: policy.tempDir }
    : undefined;
}
