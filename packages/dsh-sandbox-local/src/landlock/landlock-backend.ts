import type { ConfinedArgv } from "@suaveplan/dsh-sandbox";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../backend/index.js";
import { LANDLOCK_DENIAL_SIGNATURES, LANDLOCK_RUNNER_FAILURE_RULES } from "./landlock-dialect.js";
import { checkWrapInputs, launcherArgv, protectedPathsAtRisk, tempEnv } from "./launcher-argv.js";
import { checkLauncher, landlockEnforcement, launcherHasSeccomp, runProbeCommand } from "./launcher-check.js";
import { landlockLauncherPath } from "./launcher-path.js";

/** Options of {@link createLandlockBackend}. */
export interface LandlockBackendOptions {
  /** The compiled launcher to use. Default: {@link landlockLauncherPath}. */
  launcherPath?: string;
  /** Time limit of each probe run, in ms. Default 10 000. */
  probeTimeoutMs?: number;
}

/** Default time limit of one probe run, in ms. */
export const DEFAULT_PROBE_TIMEOUT_MS = 10_000;

/**
 * The plain Landlock backend: the command runs under the native launcher,
 * which grants read/execute everywhere and write only beneath the writable
 * roots (plus `/dev/null`), drops every capability and sets no_new_privs.
 *
 * Enforcement, per call: `read-only` is `full` at Landlock ABI >= 3 (a
 * seccomp filter refuses the metadata syscalls Landlock does not govern);
 * `workspace-write` is `partial` — Landlock has no rights for chmod,
 * timestamps or xattrs, so the metadata of files the caller owns outside the
 * workspace can still change. The probe reports the weaker of the two and
 * `facts.readOnlyEnforcement`. Landlock can only ADD access beneath a
 * directory, so `wrap` refuses (throws `SandboxUnavailableError`) a
 * `workspace-write` policy whose `protectedPaths` overlap a writable root —
 * use `landlock+bwrap` for those. `network: "deny"` needs ABI 4.
 */
export function createLandlockBackend(options: LandlockBackendOptions = {}): LocalBackend {
  const timeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const launcherPath = options.launcherPath ?? landlockLauncherPath();

  function probe(): BackendProbeResult {
    const check = checkLauncher(launcherPath, timeoutMs);
    if (!check.ok) return { backend: "landlock", available: false, reason: check.reason };
    const { abi } = check;
    const base = [launcherPath, "--min-abi", String(abi)];
    const trivial = runProbeCommand([...base, "--", "true"], timeoutMs);
    if (!trivial.ok) {
      return {
        backend: "landlock",
        available: false,
        reason: `a trivial command did not run under Landlock: ${trivial.detail}`,
        facts: { landlockAbi: abi },
      };
    }
    const notes: string[] = [];
    let seccomp = false;
    if (launcherHasSeccomp()) {
      const filtered = runProbeCommand([...base, "--freeze-metadata", "--", "true"], timeoutMs);
      seccomp = filtered.ok;
      if (!filtered.ok) notes.push(`seccomp filter unavailable: ${filtered.detail}`);
    } else {
      notes.push(`no seccomp filter for ${process.arch}`);
    }
    let networkDeny = false;
    if (abi < 4) notes.push(`network deny unavailable: needs Landlock ABI 4, kernel has ${abi}`);
    else if (seccomp) {
      const denied = runProbeCommand([...base, "--deny-net", "--", "true"], timeoutMs);
      networkDeny = denied.ok;
      if (!denied.ok) notes.push(`network deny unavailable: ${denied.detail}`);
    } else notes.push("network deny unavailable: it needs the seccomp socket filter");
    const readOnly = landlockEnforcement(abi, "read-only", seccomp);
    const workspaceWrite = landlockEnforcement(abi, "workspace-write", seccomp);
    const reasons = [
      ...(readOnly.reason !== undefined ? [`read-only is partial: ${readOnly.reason}`] : []),
      ...(workspaceWrite.reason !== undefined && workspaceWrite.reason !== readOnly.reason
        ? [`workspace-write is partial: ${workspaceWrite.reason}`]
        : []),
      ...notes,
    ];
    return {
      backend: "landlock",
      available: true,
      enforcement: readOnly.enforcement === "full" ? workspaceWrite.enforcement : "partial",
      ...(reasons.length > 0 ? { reason: reasons.join("; ") } : {}),
      facts: { landlockAbi: abi, seccomp, readOnlyEnforcement: readOnly.enforcement },
      networkDeny,
      denyRead: false,
      pty: true,
      ...(networkDeny ? { domainAllowList: "partial" as const } : {}),
    };
  }

  function wrap(
    argv: readonly string[],
    policy: LocalConfinePolicy,
    probeResult: BackendProbeResult,
  ): ConfinedArgv {
    const abi = checkWrapInputs("landlock", argv, policy, probeResult);
    const hidden = policy.denyRead ?? [];
    if (hidden.length > 0) {
      throw new SandboxUnavailableError(
        `The landlock backend cannot hide policy.denyRead path ${JSON.stringify(hidden[0]?.path)}${hidden.length > 1 ? ` (and ${hidden.length - 1} more)` : ""}: Landlock grants reads beneath "/" and cannot subtract a sub-path from an allowed parent. Use the bwrap or landlock+bwrap backend, or drop denyRead`,
      );
    }
    const atRisk = protectedPathsAtRisk(policy);
    if (atRisk.length > 0) {
      throw new SandboxUnavailableError(
        `The landlock backend cannot keep policy.protectedPaths read-only: ${atRisk.length} of them overlap a writable root, and Landlock rules only add access beneath a directory, never subtract a sub-path. Use the landlock+bwrap backend, or drop those paths from protectedPaths`,
      );
    }
    const denyNetwork = policy.network === "deny";
    const allowList = policy.network === "allow-list";
    if ((denyNetwork || allowList) && probeResult.networkDeny !== true) {
      throw new SandboxUnavailableError(
        `The landlock backend cannot enforce policy.network "${policy.network}" here (${probeResult.reason ?? "probe reported no network deny"}). Use a backend that can, or allow the network`,
      );
    }
    if (policy.network !== "allow" && (policy.allowUnixSockets ?? []).length > 0) {
      throw new SandboxUnavailableError(
        "The landlock backend cannot allow chosen UNIX sockets (allowUnixSockets) while cutting the network: seccomp cannot tell socket paths apart and Landlock does not govern connect() to a socket file. Use bwrap or landlock+bwrap",
      );
    }
    if (allowList && policy.proxySocket === undefined) {
      throw new SandboxUnavailableError(
        'The landlock backend needs the provider\'s proxy socket for network "allow-list"',
      );
    }
    const seccomp = probeResult.facts?.seccomp === true;
    const env = tempEnv(policy);
    return {
      argv: launcherArgv(launcherPath, abi, argv, policy, {
        denyNetwork,
        freezeMetadata: seccomp && policy.mode === "read-only",
        // Allow-list: TCP stream sockets only, connect only to a bridge port on
        // 127.0.0.1 that relays to the proxy's UNIX socket.
        ...(allowList
          ? {
              sockets: "tcp" as const,
              bridge: { port: 0, socket: policy.proxySocket as string },
              proxyEnv: true,
            }
          : {}),
      }),
      enforcement: landlockEnforcement(abi, policy.mode, seccomp).enforcement,
      denialSignatures: LANDLOCK_DENIAL_SIGNATURES,
      runnerFailureRules: LANDLOCK_RUNNER_FAILURE_RULES,
      ...(env !== undefined ? { env } : {}),
      network: policy.network,
      backend: "landlock",
    };
  }

  return { name: "landlock", probe, wrap };
}
