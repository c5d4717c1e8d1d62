import { spawnSync } from "node:child_process";
import { accessSync, constants, lstatSync } from "node:fs";
import { delimiter, join } from "node:path";
import type { ConfinedArgv } from "@suaveplan/dsh-sandbox";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../backend/index.js";
import { denyReadMounts } from "../internal/deny-read-masks.js";
import {
  hostUnixSocketPaths,
  maskedSockets,
  NAMESPACE_PROXY_PORT,
  unixSocketMasks,
} from "../internal/host-unix-sockets.js";
import { DEFAULT_PROBE_TIMEOUT_MS } from "./landlock-backend.js";
import { LAYERED_DENIAL_SIGNATURES, LAYERED_RUNNER_FAILURE_RULES } from "./landlock-dialect.js";
import {
  checkWrapInputs,
  isWithin,
  launcherArgv,
  protectedPathsAtRisk,
  tempEnv,
  writableRoots,
} from "./launcher-argv.js";
import {
  checkLauncher,
  launcherCanDenyNetwork,
  launcherHasSeccomp,
  runProbeCommand,
} from "./launcher-check.js";
import { landlockLauncherPath } from "./launcher-path.js";

/** Options of {@link createLayeredBackend}. */
export interface LayeredBackendOptions {
  /** The compiled launcher to use. Default: {@link landlockLauncherPath}. */
  launcherPath?: string;
  /** The bubblewrap executable. Default: `bwrap` found on `PATH`. */
  bwrapPath?: string;
  /** Time limit of each probe run, in ms. Default 10 000. */
  probeTimeoutMs?: number;
  /**
   * The host's file-system UNIX sockets, masked under `network: "deny"`
   * (default: those bound now, from `/proc/net/unix`; a seam for tests).
   */
  hostUnixSockets?: () => readonly string[];
}

/**
 * The `landlock+bwrap` backend: the Landlock launcher runs INSIDE bubblewrap.
 * bwrap mounts the whole file system read-only, re-binds the writable roots
 * read-write and then re-binds each protected path (e.g. `.git/hooks`)
 * read-only on top; a private `/dev` and `/proc` (own PID namespace) and, for
 * `network: "deny"`, an empty network namespace. Landlock then confines the
 * command inside that view, so each file effect is refused by two independent
 * mechanisms. Enforcement is `full` at every Landlock ABI (bwrap's read-only
 * binds cover what an older ABI cannot).
 *
 * Protected paths that overlap a writable root must exist when `wrap` runs
 * (a missing one could be created by the command and cannot be bound), else
 * `wrap` throws `SandboxUnavailableError`.
 */
export function createLayeredBackend(options: LayeredBackendOptions = {}): LocalBackend {
  const timeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const launcherPath = options.launcherPath ?? landlockLauncherPath();
  let bwrapPath: string | undefined = options.bwrapPath;
  const hostUnixSockets = options.hostUnixSockets ?? hostUnixSocketPaths;

  function resolveBwrap(): string | undefined {
    bwrapPath ??= findOnPath("bwrap");
    return bwrapPath;
  }

  function build(
    bwrap: string,
    abi: number,
    argv: readonly string[],
    policy: LocalConfinePolicy,
    protectedBinds: readonly string[],
  ): string[] {
    const denyNetwork = policy.network === "deny";
    const allowList = policy.network === "allow-list";
    const ownNetwork = denyNetwork || allowList;
    const out = [bwrap, "--die-with-parent", "--unshare-pid"];
    if (ownNetwork) out.push("--unshare-net");
    // A fresh /dev (its own /dev/pts, so ptys work), remounted read-only: nothing can be created there.
    out.push("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--remount-ro", "/dev");
    const roots = writableRoots(policy);
    // A denied file's directory first, so the writable and protected binds land on top of it.
    const masks = denyReadMounts(policy.denyRead ?? [], roots);
    out.push(...masks.fileDirectories);
    for (const root of roots) out.push("--bind", root, root);
    // Every directory between a writable root and a protected path is bound
    // onto itself: a mount point cannot be renamed or removed (EBUSY), so
    // `.git` cannot be moved aside and replaced by a fresh one.
    const ancestors = new Set<string>();
    for (const path of protectedBinds) {
      const root = roots.find((r) => isWithin(path, r));
      if (root !== undefined) for (const dir of directoriesBetween(root, path)) ancestors.add(dir);
    }
    for (const dir of [...ancestors].sort((a, b) => depth(a) - depth(b))) out.push("--bind", dir, dir);
    for (const path of [...protectedBinds].sort((a, b) => depth(a) - depth(b)))
      out.push("--ro-bind", path, path);
    // Hide denied directories (Landlock cannot subtract them from the read-everywhere rule).
    out.push(...masks.directories);
    // The network namespace does not cut file-system UNIX sockets: mask them, after every other bind.
    if (ownNetwork) out.push(...unixSocketMasks(maskedSockets(hostUnixSockets(), policy)));
    // Allowed host UNIX sockets need AF_UNIX: then the empty namespace gets the family filter
    // instead of --deny-net (which refuses every socket).
    const unixAllowed = (policy.allowUnixSockets ?? []).length > 0;
    const fullDeny = denyNetwork && launcherCanDenyNetwork(abi) && !unixAllowed;
    out.push(
      "--",
      ...launcherArgv(launcherPath, abi, argv, policy, {
        denyNetwork: fullDeny,
        sockets: allowList
          ? "unix+inet"
          : denyNetwork && !fullDeny && launcherHasSeccomp()
            ? "unix"
            : undefined,
        freezeMetadata: policy.mode === "read-only" && launcherHasSeccomp(),
        ...(allowList && policy.proxySocket !== undefined
          ? { bridge: { port: NAMESPACE_PROXY_PORT, socket: policy.proxySocket }, proxyEnv: true }
          : {}),
      }),
    );
    return out;
  }

  function probe(): BackendProbeResult {
    if (process.platform !== "linux") {
      return {
        backend: "landlock+bwrap",
        available: false,
        reason: `bubblewrap and Landlock are Linux-only; this host runs ${process.platform}`,
      };
    }
    const bwrap = resolveBwrap();
    if (bwrap === undefined) {
      return {
        backend: "landlock+bwrap",
        available: false,
        reason: "bubblewrap (bwrap) is not installed or not on PATH",
      };
    }
    if (!isExecutable(bwrap)) {
      return {
        backend: "landlock+bwrap",
        available: false,
        reason: "the configured bwrapPath is not an executable file",
      };
    }
    const check = checkLauncher(launcherPath, timeoutMs);
    if (!check.ok) return { backend: "landlock+bwrap", available: false, reason: check.reason };
    const { abi } = check;
    const probePolicy: LocalConfinePolicy = {
      mode: "read-only",
      workspaceRoot: "/",
      network: "deny",
      protectedPaths: [],
      tempDir: undefined,
    };
    const trivial = runProbeCommand(build(bwrap, abi, ["true"], probePolicy, []), timeoutMs);
    const facts: Record<string, string | number | boolean> = { landlockAbi: abi };
    const version = bwrapVersion(bwrap, timeoutMs);
    if (version !== undefined) facts.bwrapVersion = version;
    if (!trivial.ok) {
      return {
        backend: "landlock+bwrap",
        available: false,
        reason: `a trivial command did not run under bwrap + Landlock: ${trivial.detail}`,
        facts,
      };
    }
    return {
      backend: "landlock+bwrap",
      available: true,
      enforcement: "full",
      facts,
      networkDeny: true,
      denyRead: true,
      pty: true,
      // The allow-list's bridge port is the one Landlock TCP rule: ABI 4 and the seccomp filter.
      ...(launcherCanDenyNetwork(abi) ? { domainAllowList: "full" as const } : {}),
    };
  }

  function wrap(
    argv: readonly string[],
    policy: LocalConfinePolicy,
    probeResult: BackendProbeResult,
  ): ConfinedArgv {
    const abi = checkWrapInputs("landlock+bwrap", argv, policy, probeResult);
    const bwrap = resolveBwrap();
    if (bwrap === undefined) {
      throw new SandboxUnavailableError(
        "The landlock+bwrap backend cannot confine here: bubblewrap (bwrap) is not on PATH",
      );
    }
    const protectedBinds = protectedPathsAtRisk(policy);
    for (const path of protectedBinds) {
      const kind = pathKind(path);
      if (kind !== "present") {
        throw new SandboxUnavailableError(
          `The landlock+bwrap backend cannot keep an entry of policy.protectedPaths read-only: it ${kind === "missing" ? "does not exist, so the confined command could create it" : "is a symbolic link, not a canonical path"}. Create it before confining, or drop it from protectedPaths`,
        );
      }
    }
    const env = tempEnv(policy);
    return {
      argv: build(bwrap, abi, argv, policy, protectedBinds),
      enforcement: "full",
      denialSignatures: LAYERED_DENIAL_SIGNATURES,
      runnerFailureRules: LAYERED_RUNNER_FAILURE_RULES,
      ...(env !== undefined ? { env } : {}),
      network: policy.network,
      backend: "landlock+bwrap",
    };
  }

  return { name: "landlock+bwrap", probe, wrap };
}

/** Directories strictly between `root` and `path` (both absolute, `path` beneath `root`), outermost first. */
function directoriesBetween(root: string, path: string): string[] {
  const rest = path
    .slice(root.length)
    .split("/")
    .filter((part) => part !== "");
  const out: string[] = [];
  let current = root;
  for (const part of rest.slice(0, -1)) {
    current = current.endsWith("/") ? `${current}${part}` : `${current}/${part}`;
    out.push(current);
  }
  return out;
}

function depth(path: string): number {
  return path.split("/").filter((part) => part !== "").length;
}

function pathKind(path: string): "present" | "missing" | "symlink" {
  try {
    return lstatSync(path).isSymbolicLink() ? "symlink" : "present";
  } catch {
    return "missing";
  }
}

function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function bwrapVersion(bwrap: string, timeoutMs: number): string | undefined {
  const run = spawnSync(bwrap, ["--version"], {
    encoding: "utf8",
    timeout: timeoutMs,
    stdio: ["ignore", "pipe", "ignore"],
  });
  const match = /(\d+\.\d+(?:\.\d+)?)/.exec(run.stdout ?? "");
  return match?.[1];
}
