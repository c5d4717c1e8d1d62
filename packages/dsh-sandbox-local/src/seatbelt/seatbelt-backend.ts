import { type ConfinedArgv, SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../backend/local-backend.js";
import { type LocalHost, nodeLocalHost } from "../host/local-host.js";
import { buildSeatbeltProfile } from "./seatbelt-profile.js";

/** Options of {@link createSeatbeltBackend}. */
export interface SeatbeltBackendOptions {
  /** The runner (default `/usr/bin/sandbox-exec`). */
  sandboxExecPath?: string | undefined;
  /** Host seam (default: the real host). */
  host?: LocalHost | undefined;
}

/** Seatbelt's denial dialect: file writes refused with `EPERM`. */
export const SEATBELT_DENIAL_SIGNATURES: readonly string[] = Object.freeze(["Operation not permitted"]);

/** `sandbox-exec`'s own failures before it runs the command (bad profile, nested sandbox, exec failure). */
export const SEATBELT_RUNNER_FAILURE_RULES = Object.freeze([
  Object.freeze({
    fatalSignatures: Object.freeze([
      "sandbox-exec: sandbox_apply",
      "sandbox-exec: invalid",
      "sandbox-exec: execvp()",
      "sandbox-exec: unbound variable",
      "sandbox-exec: profile",
    ]),
  }),
]);

const PROBE_PROFILE =
  '(version 1)\n(allow default)\n(deny file-write* (require-not (literal "/dev/null")))\n';

/**
 * The macOS Seatbelt backend: `sandbox-exec -p <profile> -D… -- argv` with a
 * profile from {@link buildSeatbeltProfile}. It runs only on macOS; elsewhere
 * the probe says why not.
 */
export function createSeatbeltBackend(options: SeatbeltBackendOptions = {}): LocalBackend {
  const host = options.host ?? nodeLocalHost;
  const runner = options.sandboxExecPath ?? "/usr/bin/sandbox-exec";
  return {
    name: "seatbelt",
    probe(): BackendProbeResult {
      if (host.platform !== "darwin") {
        return {
          backend: "seatbelt",
          available: false,
          reason: `Seatbelt (sandbox-exec) runs only on macOS; this host is ${host.platform}`,
        };
      }
      if (!host.exists(runner)) {
        return {
          backend: "seatbelt",
          available: false,
          reason: "sandbox-exec is missing from this macOS installation",
        };
      }
      const run = host.run(runner, ["-p", PROBE_PROFILE, "--", "/usr/bin/true"], 10_000);
      if (run.status !== 0) {
        const line =
          run.stderr.split("\n").find((l) => l.trim() !== "") ?? run.errorCode ?? `exit ${run.status}`;
        const nested = /sandbox_apply/.test(run.stderr);
        return {
          backend: "seatbelt",
          available: false,
          reason: nested
            ? `this process already runs inside a Seatbelt sandbox and cannot apply another (sandbox-exec said: ${JSON.stringify(line)})`
            : `sandbox-exec failed its self-test (${JSON.stringify(line)})`,
        };
      }
      return {
        backend: "seatbelt",
        available: true,
        enforcement: "full",
        networkDeny: true,
        facts: { sandboxExecPath: runner },
      };
    },
    wrap(argv: readonly string[], policy: LocalConfinePolicy, probe: BackendProbeResult): ConfinedArgv {
      if (!probe.available || probe.backend !== "seatbelt") {
        throw new SandboxUnavailableError(
          `Seatbelt cannot confine here: ${probe.reason ?? "it was not probed as available"}`,
        );
      }
      const { profile, params } = buildSeatbeltProfile(policy);
      const args = [runner, "-p", profile];
      for (const [key, value] of Object.entries(params)) args.push("-D", `${key}=${value}`);
      args.push("--", ...argv);
      const confined: ConfinedArgv = {
        argv: args,
        enforcement: "full",
        denialSignatures: SEATBELT_DENIAL_SIGNATURES,
        runnerFailureRules: SEATBELT_RUNNER_FAILURE_RULES,
        backend: "seatbelt",
        network: policy.network,
      };
      if (policy.mode === "workspace-write" && policy.tempDir !== undefined)
        confined.env = { TMPDIR: policy.tempDir };
      return confined;
    },
  };
}
