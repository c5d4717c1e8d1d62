import { runConfinedBash } from "@suaveplan/dsh-bash-sandbox";
import { type SandboxExecutionPolicy, SandboxPolicyService } from "@suaveplan/dsh-sandbox";
import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { isSuaveplanError } from "@suaveplan/sandbox-core/error-codes";
import type { CliIo } from "../cli/cli-io.js";
import type { ExitCode } from "../cli/exit-codes.js";
import { UsageError } from "../cli/usage-error.js";
import { shellQuote } from "./shell-quote.js";

/** Exit code when the sandbox itself could not run the command (no backend, runner failure). */
export const EXIT_SANDBOX_FAILURE = 125;

/** Options of `suaveplan-sandbox exec`. */
export interface ExecOptions {
  mode: "read-only" | "workspace-write";
  /** Workspace root (default: the current directory); canonicalised with realpath. */
  workspace: string | undefined;
  network: "allow" | "deny";
  json: boolean;
}

/**
 * Run `argv` confined by the first usable local backend. The command's own
 * output streams through; the outcome (ok / denied / failed / runner-failure)
 * goes to stderr. Exits with the command's exit code, 125 when the sandbox
 * could not run it, and 3 on timeout.
 * @throws UsageError when the workspace does not resolve to a directory.
 */
export async function execCommand(argv: readonly string[], options: ExecOptions, io: CliIo): Promise<number> {
  let policy: SandboxExecutionPolicy;
  try {
    policy = new SandboxPolicyService({
      defaultMode: options.mode,
      workspaceRoot: options.workspace ?? io.cwd,
    }).resolve();
  } catch (error) {
    // A workspace that does not resolve is the caller's mistake, not a sandbox failure.
    if (isSuaveplanError(error)) {
      const flag = options.workspace === undefined ? "the current directory" : "--workspace";
      throw new UsageError(`${flag}: ${error.message}`);
    }
    throw error;
  }
  const provider = new LocalSandboxProvider({ network: options.network });
  try {
    const result = await runConfinedBash(shellQuote(argv), policy, {
      provider,
      cwd: options.workspace === undefined ? io.cwd : policy.workspaceRoot,
      ...(options.json ? {} : { onStdout: io.stdout, onStderr: io.stderr }),
    });
    if (options.json) {
      io.stdout(
        `${JSON.stringify({ ...result, mode: policy.mode, workspaceRoot: policy.workspaceRoot }, null, 2)}\n`,
      );
    } else {
      const where = `${result.backend ?? "unconfined"}, enforcement ${result.enforcement}`;
      const detail = result.detail ? `: ${result.detail}` : "";
      io.stderr(
        `[${result.outcome}] exit ${result.exitCode ?? result.signal} (${policy.mode} via ${where})${detail}\n`,
      );
    }
    if (result.timedOut) return 3;
    if (result.outcome === "runner-failure") return EXIT_SANDBOX_FAILURE;
    if (result.exitCode === 0) return 0;
    return result.exitCode ?? 1;
  } catch (error) {
    if (isSuaveplanError(error)) {
      io.stderr(`error: ${error.message}\n`);
      return EXIT_SANDBOX_FAILURE;
    }
    throw error;
  } finally {
    provider.dispose();
  }
}

/** `suaveplan-sandbox probe`: which backends can run here, their enforcement, and why not. */
export async function probeCommand(options: { json: boolean }, io: CliIo): Promise<ExitCode> {
  const provider = new LocalSandboxProvider();
  try {
    const probes = provider.probe();
    if (options.json) {
      io.stdout(`${JSON.stringify(probes, null, 2)}\n`);
    } else {
      for (const p of probes) {
        const state = p.available ? `available, enforcement ${p.enforcement ?? "?"}` : "unavailable";
        const network = p.networkDeny === undefined ? "" : `, network deny ${p.networkDeny ? "yes" : "no"}`;
        io.stdout(`${p.backend.padEnd(15)} ${state}${network}${p.reason ? ` — ${p.reason}` : ""}\n`);
      }
    }
    return probes.some((p) => p.available) ? 0 : 1;
  } finally {
    provider.dispose();
  }
}
