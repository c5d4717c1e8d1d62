import { type ConfinedArgv, SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../backend/local-backend.js";
import { type LocalHost, nodeLocalHost } from "../host/local-host.js";
import { planWindowsAcl, randomSessionSid } from "./windows-acl-plan.js";

/** Options of {@link createWindowsAclBackend}. */
export interface WindowsAclBackendOptions {
  /** The restricted-token launcher that applies a plan (`<launcher> --plan <json> -- argv`). None ships with this package. */
  launcherPath?: string | undefined;
  /** Host seam (default: the real host). */
  host?: LocalHost | undefined;
  /** Random source for session SIDs (tests). */
  random?: ((size: number) => Uint8Array) | undefined;
}

/** The ACL runner's denial dialect. */
export const WINDOWS_ACL_DENIAL_SIGNATURES: readonly string[] = Object.freeze(["Access is denied"]);

/** Lines the launcher prints when it fails before running the command. */
export const WINDOWS_ACL_RUNNER_FAILURE_RULES = Object.freeze([
  Object.freeze({ fatalSignatures: Object.freeze(["suaveplan-acl-launcher: "]) }),
]);

/**
 * The Windows restricted-token + ACL backend. It plans (see
 * {@link planWindowsAcl}) and hands the plan to an operator-supplied launcher;
 * enforcement is always `partial` (Everyone-writable locations and hard
 * links). Each live session/workspace pair keeps one random SID; agentless
 * calls get a fresh one per call. Runs only on Windows.
 */
export function createWindowsAclBackend(options: WindowsAclBackendOptions = {}): LocalBackend {
  const host = options.host ?? nodeLocalHost;
  const sessionSids = new Map<string, string>();
  const sessionSidFor = (policy: LocalConfinePolicy): string => {
    if (policy.sessionId === undefined) return randomSessionSid(options.random);
    const key = `${policy.sessionId}\u0000${policy.workspaceRoot}`;
    let sid = sessionSids.get(key);
    if (sid === undefined) {
      sid = randomSessionSid(options.random);
      sessionSids.set(key, sid);
    }
    return sid;
  };
  return {
    name: "windows-acl",
    probe(): BackendProbeResult {
      if (host.platform !== "win32") {
        return {
          backend: "windows-acl",
          available: false,
          reason: `the restricted-token ACL backend runs only on Windows; this host is ${host.platform}`,
        };
      }
      if (options.launcherPath === undefined) {
        return {
          backend: "windows-acl",
          available: false,
          reason:
            "no restricted-token launcher is configured (windowsLauncherPath); this package ships the ACL plan, not the launcher",
        };
      }
      const run = host.run(options.launcherPath, ["--probe"], 10_000);
      if (run.status !== 0) {
        return {
          backend: "windows-acl",
          available: false,
          reason: `the restricted-token launcher failed its self-test (${run.errorCode ?? `exit ${run.status}`})`,
        };
      }
      return {
        backend: "windows-acl",
        available: true,
        enforcement: "partial",
        networkDeny: false,
        reason:
          "partial: Everyone-writable locations and hard links are outside what ACLs on the writable roots can govern",
        facts: { launcherPath: options.launcherPath },
      };
    },
    wrap(argv: readonly string[], policy: LocalConfinePolicy, probe: BackendProbeResult): ConfinedArgv {
      const launcher = probe.facts?.launcherPath;
      if (!probe.available || probe.backend !== "windows-acl" || typeof launcher !== "string") {
        throw new SandboxUnavailableError(
          `the windows-acl backend cannot confine here: ${probe.reason ?? "it was not probed as available"}`,
        );
      }
      if (policy.network === "deny") {
        throw new SandboxUnavailableError('the windows-acl backend cannot enforce network "deny"');
      }
      const plan = planWindowsAcl(policy, sessionSidFor(policy));
      const confined: ConfinedArgv = {
        argv: [launcher, "--plan", JSON.stringify(plan), "--", ...argv],
        enforcement: "partial",
        denialSignatures: WINDOWS_ACL_DENIAL_SIGNATURES,
        runnerFailureRules: WINDOWS_ACL_RUNNER_FAILURE_RULES,
        backend: "windows-acl",
        network: "allow",
      };
      if (policy.mode === "workspace-write" && policy.tempDir !== undefined) {
        confined.env = { TMP: policy.tempDir, TEMP: policy.tempDir, TMPDIR: policy.tempDir };
      }
      return confined;
    },
  };
}
