import {
  type ConfinedCommandResult,
  type RunConfinedCommandOptions,
  runConfinedCommand,
  sanitisedEnvironment,
} from "@suaveplan/dsh-bash-sandbox";
import type { SandboxExecutionPolicy } from "@suaveplan/dsh-sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";

/** Options of {@link runConfinedPwsh}. */
export interface RunConfinedPwshOptions extends RunConfinedCommandOptions {
  /** The PowerShell program (default `"pwsh"`, looked up on the environment's `PATH`). */
  pwsh?: string;
}

/** What {@link runConfinedPwsh} returns (the same shape as `runConfinedBash`'s). */
export type ConfinedPwshResult = ConfinedCommandResult;

/** PowerShell's own switches: no banner, no profile scripts (host code), no prompts. */
export const PWSH_SWITCHES: readonly string[] = Object.freeze(["-NoLogo", "-NoProfile", "-NonInteractive"]);

/** Added to the environment unless the caller set them: no telemetry, no update check (both would reach the network). */
const QUIET_PWSH_ENV: Readonly<Record<string, string>> = Object.freeze({
  POWERSHELL_TELEMETRY_OPTOUT: "1",
  POWERSHELL_UPDATECHECK: "Off",
});

/**
 * Run `script` with `pwsh -NoLogo -NoProfile -NonInteractive -Command`,
 * confined by `options.provider` under `policy`, and attribute the result —
 * with the same spawning, bounding, reaping and attribution as
 * `runConfinedBash` (both use `runConfinedCommand`). Under
 * `danger-full-access` — and only then — the script runs unconfined.
 * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) for a malformed policy.
 * @throws SandboxError (`SANDBOX_INVALID_OPTIONS`) for a malformed script or option.
 * @throws SandboxUnavailableError (`SANDBOX_UNAVAILABLE`) when the provider cannot confine here.
 */
export async function runConfinedPwsh(
  script: string,
  policy: SandboxExecutionPolicy,
  options: RunConfinedPwshOptions,
): Promise<ConfinedPwshResult> {
  if (typeof script !== "string" || script.includes("\0")) {
    throw invalid("script must be a string without NUL bytes");
  }
  if (script.trim() === "") throw invalid("script must not be empty or blank");
  if (typeof options !== "object" || options === null)
    throw invalid("options.provider must be a SandboxProvider");
  const pwsh = options.pwsh ?? "pwsh";
  if (typeof pwsh !== "string" || pwsh === "" || pwsh.includes("\0")) {
    throw invalid("options.pwsh must be a non-empty string without NUL bytes");
  }
  const given = options.env ?? "sanitised";
  const base =
    given === "sanitised"
      ? sanitisedEnvironment()
      : given === "inherit"
        ? Object.fromEntries(
            Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
          )
        : given;
  const env = typeof base === "object" && base !== null ? { ...QUIET_PWSH_ENV, ...base } : base;
  return runConfinedCommand(
    [pwsh, ...PWSH_SWITCHES, "-Command", script],
    policy,
    { ...options, env },
    "runConfinedPwsh",
  );
}

function invalid(message: string): SandboxError {
  return new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, `runConfinedPwsh: ${message}`);
}
