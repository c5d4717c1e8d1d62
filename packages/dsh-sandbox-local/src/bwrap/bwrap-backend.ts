import { type ConfinedArgv, SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../backend/local-backend.js";
import { type LocalHost, nodeLocalHost } from "../host/local-host.js";
import { denyReadMounts } from "../internal/deny-read-masks.js";
import {
  hostUnixSocketPaths,
  maskedSockets,
  NAMESPACE_PROXY_PORT,
  unixSocketMasks,
} from "../internal/host-unix-sockets.js";
import { isWithin, pathAncestorsBetween } from "../internal/paths.js";
import { PROXY_ENV_EXTRA } from "../landlock/launcher-argv.js";
import { landlockLauncherPath } from "../landlock/launcher-path.js";
import { explainBwrapFailure } from "./bwrap-diagnosis.js";
import {
  BWRAP_DENIAL_SIGNATURES,
  BWRAP_ROOT_DENIAL_SIGNATURES,
  BWRAP_RUNNER_FAILURE_RULES,
} from "./bwrap-dialect.js";

/** Options of {@link createBwrapBackend}. */
export interface BwrapBackendOptions {
  /** The bwrap executable (default: `bwrap` found on `PATH`). */
  bwrapPath?: string | undefined;
  /** Host seam (default: the real host). */
  host?: LocalHost | undefined;
  /** Probe timeout in ms (default 10 000). */
  probeTimeoutMs?: number | undefined;
  /**
   * The host's file-system UNIX sockets, masked under `network: "deny"`
   * (default: those bound now, from `/proc/net/unix`; a seam for tests).
   */
  hostUnixSockets?: (() => readonly string[]) | undefined;
  /**
   * The Landlock launcher, used inside bwrap (`--seccomp-only`) for its
   * seccomp socket-family filter under `network: "deny"` (default: the one
   * built into this package). Without it, bwrap reports `networkDeny: false`.
   */
  launcherPath?: string | undefined;
}

/** The oldest bwrap with every flag used here (`--cap-drop`, `--die-with-parent`, `--new-session`). */
const MIN_VERSION: readonly [number, number, number] = [0, 4, 0];
/** First bwrap with `--disable-userns`. */
const DISABLE_USERNS_VERSION: readonly [number, number, number] = [0, 8, 0];

/**
 * Prints the two `/proc/self/status` lines that prove the confined process is
 * powerless: `CapEff` (must be all zeros) and `NoNewPrivs` (must be 1).
 */
const PROBE_SCRIPT =
  'while IFS= read -r line; do case "$line" in CapEff:*|NoNewPrivs:*) printf "%s\\n" "$line";; esac; done < /proc/self/status';

interface Variant {
  userNamespace: boolean;
  disableUserns: boolean;
  network: boolean;
}

function parseVersion(text: string): [number, number, number] | undefined {
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (match === null) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)];
}

function atLeast(version: readonly number[], floor: readonly number[]): boolean {
  for (let i = 0; i < floor.length; i++) {
    const a = version[i] ?? 0;
    const b = floor[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** The namespace/privilege flags of one variant (everything except the mounts). */
function isolationFlags(variant: Variant): string[] {
  const flags: string[] = [];
  if (variant.userNamespace) flags.push("--unshare-user");
  if (variant.disableUserns) flags.push("--disable-userns");
  flags.push("--unshare-pid", "--unshare-ipc", "--unshare-uts");
  if (variant.network) flags.push("--unshare-net");
  flags.push("--die-with-parent", "--new-session", "--cap-drop", "ALL");
  return flags;
}

/**
 * The base filesystem: read-only `/`, a fresh `/dev` and `/proc`, a private
 * `/dev/shm`; then `/dev` itself is remounted read-only, so nothing can be
 * created there while the device nodes (`/dev/null`, the ptys of its own
 * `/dev/pts` instance) stay usable and `/dev/shm` (its own mount) writable.
 */
const BASE_MOUNTS: readonly string[] = Object.freeze([
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/dev/shm",
  "--remount-ro",
  "/dev",
]);

/** Inside bwrap, under network deny: only AF_UNIX sockets (host socket files are masked, the namespace is empty). */
const SOCKET_FILTER_ARGS: readonly string[] = Object.freeze(["--seccomp-only", "--sockets", "unix"]);

/**
 * The Linux bubblewrap backend. The confined process sees `/` read-only, a
 * fresh `/dev` (with a writable `/dev/null`) and `/proc`, a private `/dev/shm`;
 * under `workspace-write` the canonical workspace and a private temp area are
 * bound writable, and protected sub-paths are re-bound read-only on top (their
 * parent directories are bound onto themselves so they cannot be renamed away).
 * It runs in new pid/ipc/uts (and, when available, user) namespaces with
 * `--cap-drop ALL`, `--die-with-parent` and `--new-session`; `network: "deny"`
 * adds `--unshare-net` and masks the host's file-system UNIX sockets.
 */
export function createBwrapBackend(options: BwrapBackendOptions = {}): LocalBackend {
  const host = options.host ?? nodeLocalHost;
  const hostUnixSockets = options.hostUnixSockets ?? hostUnixSocketPaths;
  const timeoutMs = options.probeTimeoutMs ?? 10_000;
  const launcherPath = options.launcherPath ?? landlockLauncherPath();

  const unavailable = (reason: string, facts?: BackendProbeResult["facts"]): BackendProbeResult => {
    const result: BackendProbeResult = { backend: "bwrap", available: false, reason };
    if (facts !== undefined) result.facts = facts;
    return result;
  };

  /** Undefined when the launcher's socket filter runs here; else why not. */
  const socketFilterCheck = (): string | undefined => {
    if (host.findExecutable(launcherPath) === undefined) {
      return "the socket-family filter needs the Landlock launcher, which is not built (run the package build with a C compiler)";
    }
    const run = host.run(launcherPath, [...SOCKET_FILTER_ARGS, "--", "true"], timeoutMs);
    if (run.status === 0) return undefined;
    const line = run.stderr
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim();
    return `the launcher's socket-family filter did not run (${run.errorCode ?? line ?? `exit ${run.status}`})`;
  };

  return {
    name: "bwrap",

    probe(): BackendProbeResult {
      if (host.platform !== "linux") {
        return unavailable(`bubblewrap runs only on Linux; this host is ${host.platform}`);
      }
      const bwrap = host.findExecutable(options.bwrapPath ?? "bwrap");
      if (bwrap === undefined) {
        return unavailable(
          options.bwrapPath === undefined
            ? "bubblewrap is not installed: no executable `bwrap` on PATH (install the bubblewrap package)"
            : "the configured bwrapPath is not an executable file",
        );
      }
      const versionRun = host.run(bwrap, ["--version"], timeoutMs);
      if (versionRun.errorCode !== undefined || versionRun.status !== 0) {
        return unavailable(`bwrap --version failed (${versionRun.errorCode ?? `exit ${versionRun.status}`})`);
      }
      const version = parseVersion(versionRun.stdout);
      const bwrapVersion = version?.join(".") ?? "unknown";
      const callerIsRoot = host.uid === 0;
      if (version === undefined || !atLeast(version, MIN_VERSION)) {
        return unavailable(
          `bwrap ${bwrapVersion} is too old: 0.4.0 or newer is needed for --cap-drop, --die-with-parent and --new-session`,
          {
            bwrapVersion,
          },
        );
      }
      const disableUserns = atLeast(version, DISABLE_USERNS_VERSION);
      // Preferred first: a user namespace (empty capability bounding set,
      // locked mounts, nested user namespaces disabled) with the network cut.
      const variants: Variant[] = [
        { userNamespace: true, disableUserns, network: true },
        { userNamespace: true, disableUserns, network: false },
      ];
      // Root can run bwrap without a user namespace; caps are still dropped and NoNewPrivs set.
      if (callerIsRoot) {
        variants.push({ userNamespace: false, disableUserns: false, network: true });
        variants.push({ userNamespace: false, disableUserns: false, network: false });
      }
      let firstFailure: string | undefined;
      for (const variant of variants) {
        const run = host.run(
          bwrap,
          [...isolationFlags(variant), ...BASE_MOUNTS, "--", "/bin/sh", "-c", PROBE_SCRIPT],
          timeoutMs,
        );
        if (run.status === 0) {
          const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(run.stdout)?.[1];
          const noNewPrivs = /^NoNewPrivs:\s*(\d+)$/m.exec(run.stdout)?.[1];
          if (capEff === undefined || !/^0+$/.test(capEff) || noNewPrivs !== "1") {
            return unavailable(
              `the bwrap-confined probe kept privileges (CapEff ${capEff ?? "unknown"}, NoNewPrivs ${noNewPrivs ?? "unknown"}); refusing a sandbox that does not drop them`,
              { bwrapVersion },
            );
          }
          // Network deny also needs the launcher's socket-family filter (no AF_NETLINK, AF_VSOCK …).
          const filter = variant.network ? socketFilterCheck() : undefined;
          const result: BackendProbeResult = {
            backend: "bwrap",
            available: true,
            enforcement: "full",
            networkDeny: variant.network && filter === undefined,
            denyRead: true,
            pty: true,
            ...(variant.network && filter === undefined ? { domainAllowList: "full" as const } : {}),
            facts: {
              bwrapPath: bwrap,
              bwrapVersion,
              userNamespace: variant.userNamespace,
              disableUserns: variant.disableUserns,
              callerIsRoot,
              ...(variant.network && filter === undefined ? { socketFilter: launcherPath } : {}),
            },
          };
          if (filter !== undefined) result.reason = `network deny unavailable: ${filter}`;
          return result;
        }
        firstFailure ??=
          run.errorCode !== undefined ? `could not start bwrap (${run.errorCode})` : run.stderr;
      }
      return unavailable(explainBwrapFailure(firstFailure ?? "", host), { bwrapVersion });
    },

    wrap(argv: readonly string[], policy: LocalConfinePolicy, probe: BackendProbeResult): ConfinedArgv {
      const facts = probe.facts ?? {};
      const bwrap = facts.bwrapPath;
      if (!probe.available || probe.backend !== "bwrap" || typeof bwrap !== "string") {
        throw new SandboxUnavailableError(
          `bwrap cannot confine here: ${probe.reason ?? "it was not probed as available"}`,
        );
      }
      if (policy.network !== "allow" && probe.networkDeny !== true) {
        throw new SandboxUnavailableError(
          `bwrap cannot enforce network "${policy.network}" here: --unshare-net failed its probe`,
        );
      }
      const variant: Variant = {
        userNamespace: facts.userNamespace === true,
        disableUserns: facts.disableUserns === true,
        network: policy.network !== "allow",
      };
      const roots =
        policy.mode === "workspace-write"
          ? [
              policy.workspaceRoot,
              ...(policy.tempDir !== undefined ? [policy.tempDir] : []),
              ...(policy.writableRoots ?? []),
            ]
          : [];
      const masks = denyReadMounts(policy.denyRead ?? [], roots);
      // A denied file's directory first, so the writable and protected binds land on top of it.
      const args = [bwrap, ...isolationFlags(variant), ...BASE_MOUNTS, ...masks.fileDirectories];
      const env: Record<string, string> = {};
      if (policy.mode === "workspace-write") {
        args.push("--bind", policy.workspaceRoot, policy.workspaceRoot);
        if (policy.tempDir !== undefined) {
          args.push("--bind", policy.tempDir, policy.tempDir, "--setenv", "TMPDIR", policy.tempDir);
          env.TMPDIR = policy.tempDir;
        }
        for (const root of policy.writableRoots ?? []) args.push("--bind", root, root);
        // Bind every directory between a writable root and a protected path onto
        // itself: a mount point cannot be renamed or removed (EBUSY), so `.git`
        // cannot be moved aside and replaced. All writable binds come first;
        // the read-only re-binds last, so none is covered by a later bind.
        const protectedPaths = [...policy.protectedPaths].sort((a, b) => depth(a) - depth(b));
        const ancestors = new Set<string>();
        for (const path of protectedPaths) {
          const root = roots.filter((r) => isWithin(r, path)).sort((a, b) => depth(b) - depth(a))[0];
          if (root === undefined) continue;
          for (const ancestor of pathAncestorsBetween(root, path)) ancestors.add(ancestor);
        }
        for (const ancestor of [...ancestors].sort((a, b) => depth(a) - depth(b))) {
          args.push("--bind", ancestor, ancestor);
        }
        for (const path of protectedPaths) args.push("--ro-bind", path, path);
      }
      // Hide denied directories: an empty read-only tmpfs over each, after every other bind.
      args.push(...masks.directories);
      // A network namespace of its own does not cut file-system UNIX sockets
      // (docker.sock, an SSH agent, D-Bus): mask them, after every other bind.
      if (variant.network) args.push(...unixSocketMasks(maskedSockets(hostUnixSockets(), policy)));
      const socketFilter = facts.socketFilter;
      if (variant.network && typeof socketFilter !== "string") {
        throw new SandboxUnavailableError(
          `bwrap cannot enforce network "${policy.network}" here: the socket-family filter was not probed as available`,
        );
      }
      // Under network deny, the launcher inside bwrap refuses every socket family but AF_UNIX;
      // under an allow-list it also bridges 127.0.0.1:3128 (in the empty namespace) to the proxy.
      if (policy.network === "deny") args.push("--", socketFilter as string, ...SOCKET_FILTER_ARGS);
      if (policy.network === "allow-list") {
        if (policy.proxySocket === undefined) {
          throw new SandboxUnavailableError('bwrap: network "allow-list" needs the provider\'s proxy socket');
        }
        args.push(
          "--",
          socketFilter as string,
          "--seccomp-only",
          "--sockets",
          "unix+inet",
          "--bridge",
          `${NAMESPACE_PROXY_PORT}:${policy.proxySocket}`,
          "--proxy-env",
          ...PROXY_ENV_EXTRA,
        );
      }
      args.push("--", ...argv);
      const confined: ConfinedArgv = {
        argv: args,
        enforcement: "full",
        denialSignatures:
          facts.callerIsRoot === true
            ? [...BWRAP_DENIAL_SIGNATURES, ...BWRAP_ROOT_DENIAL_SIGNATURES]
            : [...BWRAP_DENIAL_SIGNATURES],
        runnerFailureRules: BWRAP_RUNNER_FAILURE_RULES,
        backend: "bwrap",
        network: policy.network,
      };
      if (Object.keys(env).length > 0) confined.env = env;
      return confined;
    },
  };
}

function depth(path: string): number {
  return path.split("/").length;
}
