import type { ConfinedArgv } from "@suaveplan/dsh-sandbox";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../backend/index.js";
import { LANDLOCK_DENIAL_SIGNATURES, LANDLOCK_RUNNER_FAILURE_RULES } from "./landlock-dialect.js";
import { checkWrapInputs, launcherArgv, protectedPathsAtRisk, tempEnv } from "./launcher-argv.js";
import {
  checkLauncher,
  landlockEnforcement,
  launcherCanDenyNetwork,
  runProbeCommand,
} from "./launcher-check.js";
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
 * Enforcement is `full` at Landlock ABI >= 3 and `partial` below (the probe's
 * reason names the missing rights). Landlock can only ADD access beneath a
 * directory, never carve a sub-path out of a writable root, so `wrap` refuses
 * (throws `SandboxUnavailableError`) a `workspace-write` policy whose
 * `protectedPaths` overlap a writable root — use the `landlock+bwrap` backend
 * for those. `network: "deny"` is enforced from ABI 4 (see the package's
 * docs/landlock.md for exactly what that covers).
 */
export function createLandlockBackend(options: LandlockBackendOptions = {}): LocalBackend {
  const timeoutMs = options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS;
  const launcherPath = options.launcherPath ?? landlockLauncherPath();

  function probe(): BackendProbeResult {
    const check = checkLauncher(launcherPath, timeoutMs);
    if (!check.ok) return { backend: "landlock", available: false, reason: check.reason };
    const { abi } = check;
    const trivial = runProbeCommand([launcherPath, "--min-abi", String(abi), "--", "true"], timeoutMs);
    if (!trivial.ok) {
      return {
        backend: "landlock",
        available: false,
        reason: `a trivial command did not run under Landlock: ${trivial.detail}`,
        facts: { landlockAbi: abi },
      };
    }
    let networkDeny = false;
    let networkNote: string | undefined;
    if (launcherCanDenyNetwork(abi)) {
      const denied = runProbeCommand(
        [launcherPath, "--min-abi", String(abi), "--deny-net", "--", "true"],
        timeoutMs,
      );
      networkDeny = denied.ok;
      if (!denied.ok) networkNote = `network deny unavailable: ${denied.detail}`;
    } else {
      networkNote =
        abi < 4
          ? `network deny unavailable: needs Landlock ABI 4, kernel has ${abi}`
          : `network deny unavailable: no seccomp socket filter for ${process.arch}`;
    }
    const { enforcement, reason } = landlockEnforcement(abi);
    const reasons = [reason, networkNote].filter((r): r is string => r !== undefined);
    return {
      backend: "landlock",
      available: true,
      enforcement,
      ...(reasons.length > 0 ? { reason: reasons.join("; ") } : {}),
      facts: { landlockAbi: abi },
      networkDeny,
    };
  }

  function wrap(
    argv: readonly string[],
    policy: LocalConfinePolicy,
    probeResult: BackendProbeResult,
  ): ConfinedArgv {
    const abi = checkWrapInputs("landlock", argv, policy, probeResult);
    const atRisk = protectedPathsAtRisk(policy);
    if (atRisk.length > 0) {
      throw new SandboxUnavailableError(
        `The landlock backend cannot keep policy.protectedPaths read-only: ${atRisk.length} of them overlap a writable root, and Landlock rules only add access beneath a directory, never subtract a sub-path. Use the landlock+bwrap backend, or drop those paths from protectedPaths`,
      );
    }
    const denyNetwork = policy.network === "deny";
    if (denyNetwork && probeResult.networkDeny !== true) {
      throw new SandboxUnavailableError(
        `The landlock backend cannot enforce policy.network "deny" here (${probeResult.reason ?? "probe reported no network deny"}). Use a backend that can, or allow the network`,
      );
    }
    const env = tempEnv(policy);
    return {
      argv: launcherArgv(launcherPath, abi, argv, policy, denyNetwork),
      enforcement: landlockEnforcement(abi).enforcement,
      denialSignatures: LANDLOCK_DENIAL_SIGNATURES,
      runnerFailureRules: LANDLOCK_RUNNER_FAILURE_RULES,
      ...(env !== undefined ? { env } : {}),
      backend: "landlock",
    };
  }

  return { name: "landlock", probe, wrap };
}
