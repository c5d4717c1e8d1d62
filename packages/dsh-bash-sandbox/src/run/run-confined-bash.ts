import type { SandboxExecutionPolicy } from "@suaveplan/dsh-sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import {
  type ConfinedCommandResult,
  type ProcessEnvironment,
  type RunConfinedCommandOptions,
  runConfinedCommand,
} from "./run-confined-command.js";

/**
 * The environment the shell gets: `"sanitised"` (default) is the host
 * environment without secrets and identity keys (the SpawnEngine's
 * `sanitiseEnv` rules); `"inherit"` is the host environment as is; a map is
 * used verbatim. The sandbox's own variables (e.g. `TMPDIR`) are added on top.
 */
export type BashEnvironment = ProcessEnvironment;

/** Options of {@link runConfinedBash}. */
export interface RunConfinedBashOptions extends RunConfinedCommandOptions {
  /** The shell program (default `"bash"`, looked up on the environment's `PATH`). */
  bash?: string;
}

/** What {@link runConfinedBash} returns. */
export type ConfinedBashResult = ConfinedCommandResult;

/**
 * Prefixed to the command on its first line (so `line N` in bash's messages
 * stays the user's line N): closes every descriptor above 2 that the host
 * process leaked without close-on-exec — and that the sandbox runner passed
 * through — before the command runs. Pure bash, no external program; a no-op
 * where `/proc/self/fd` does not exist.
 */
const CLOSE_INHERITED_FDS =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
  'for __sb_fd in /proc/self/fd/*; do __sb_fd=${__sb_fd##*/}; case $__sb_fd in 0|1|2|*[!0-9]*) ;; *) eval "exec $__sb_fd>&-";; esac; done; unset __sb_fd; ';

/**
 * Run `command` with `bash -c`, confined by `options.provider` under `policy`,
 * and attribute the result. The child gets stdio only (`["ignore", "pipe",
 * "pipe"]`) in its own process group; output is streamed and bounded; the
 * timeout kills the whole group. Under `danger-full-access` — and only then —
 * the command runs unconfined and the provider is not called. A provider that
 * cannot confine throws `SandboxUnavailableError` and nothing is spawned.
 * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) for a malformed policy.
 * @throws SandboxError (`SANDBOX_INVALID_OPTIONS`) for a malformed command or option.
 * @throws SandboxUnavailableError (`SANDBOX_UNAVAILABLE`) when the provider cannot confine here.
 */
export async function runConfinedBash(
  command: string,
  policy: SandboxExecutionPolicy,
  options: RunConfinedBashOptions,
): Promise<ConfinedBashResult> {
  if (typeof command !== "string" || command.includes("\0")) {
    throw invalid("command must be a string without NUL bytes");
  }
  if (command.trim() === "") throw invalid("command must not be empty or blank");
  const bash = typeof options === "object" && options !== null ? (options.bash ?? "bash") : "bash";
  if (typeof bash !== "string" || bash === "" || bash.includes("\0")) {
    throw invalid("options.bash must be a non-empty string without NUL bytes");
  }
  return runConfinedCommand(
    [bash, "-c", `${CLOSE_INHERITED_FDS}${command}`],
    policy,
    options,
    "runConfinedBash",
  );
}

function invalid(message: string): SandboxError {
  return new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, `runConfinedBash: ${message}`);
}
