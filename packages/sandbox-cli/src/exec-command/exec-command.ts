import { realpathSync, statSync } from "node:fs";
import { constants } from "node:os";
import { isAbsolute, resolve } from "node:path";
import { runConfinedBash, sanitisedEnvironment } from "@suaveplan/dsh-bash-sandbox";
import { type SandboxExecutionPolicy, SandboxPolicyService } from "@suaveplan/dsh-sandbox";
import { createFileProbeCache, LocalSandboxProvider, SECRETS_DENY_READ } from "@suaveplan/dsh-sandbox-local";
import { isSuaveplanError } from "@suaveplan/sandbox-core/error-codes";
import type { CliIo } from "../cli/cli-io.js";
import type { ExitCode } from "../cli/exit-codes.js";
import { STOP_EXIT_CODES, type StopReason } from "../cli/process-stop.js";
import { UsageError } from "../cli/usage-error.js";
import { MAX_DURATION_MS } from "./duration.js";
import { EXEC_EXIT_CODES } from "./exec-exit-codes.js";
import { shellQuote } from "./shell-quote.js";

/** @deprecated use {@link EXEC_EXIT_CODES}`.sandboxFailure`. */
export const EXIT_SANDBOX_FAILURE = EXEC_EXIT_CODES.sandboxFailure;

/** Variables passed through from the caller by default (the sanitiser's rules still drop secrets). */
export const PASSED_THROUGH_ENV: readonly string[] = Object.freeze(["HOME", "USER", "LANG", "TERM", "PATH"]);

/** Options of `suaveplan-sandbox exec` (flags and settings file merged). */
export interface ExecOptions {
  mode: "read-only" | "workspace-write";
  /** Workspace root (default: the current directory); canonicalised with realpath. */
  workspace: string | undefined;
  network: "allow" | "deny";
  /** Whether `network` was given (a flag or the settings file) rather than defaulted. */
  networkExplicit?: boolean;
  /** Hosts allowed through the filtering proxy (`--allow-domain`); the rest of the network is cut. */
  allowDomains?: readonly string[];
  /** Extra writable directories (`--allow-write`). */
  allowWrite: readonly string[];
  /** Paths hidden from the command (`--deny-read`). */
  denyRead: readonly string[];
  /** Add {@link SECRETS_DENY_READ} to `denyRead` (`--deny-secrets`). */
  denySecrets: boolean;
  /** `NAME` (pass the caller's value) or `NAME=VALUE` (`--env`). */
  env: readonly string[];
  /** Wall-clock limit in ms (`--timeout`); none when undefined. */
  timeoutMs: number | undefined;
  json: boolean;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Run `argv` confined by the first usable local backend. The command's own
 * output streams through; the outcome goes to stderr. Exits with the
 * command's exit code (128 + N when a signal N ended it), or one of
 * {@link EXEC_EXIT_CODES}.
 * @throws UsageError for a workspace, `--allow-write` or `--env` that is not usable.
 */
export async function execCommand(argv: readonly string[], options: ExecOptions, io: CliIo): Promise<number> {
  const hostEnv = io.env ?? process.env;
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
  const writableRoots = options.allowWrite.map((path) => existingDirectory(path, io.cwd));
  const denyRead = [
    ...options.denyRead.map((path) =>
      path.startsWith("~/") || isAbsolute(path) ? path : resolve(io.cwd, path),
    ),
    ...(options.denySecrets ? SECRETS_DENY_READ : []),
  ];
  const env = commandEnvironment(options.env, hostEnv);
  const allowDomains = options.allowDomains ?? [];
  if (allowDomains.length > 0 && options.networkExplicit === true) {
    throw new UsageError(
      "--allow-domain already cuts every other network; drop --network (or network in --settings)",
    );
  }
  let provider: LocalSandboxProvider;
  try {
    provider = new LocalSandboxProvider({
      network: allowDomains.length > 0 ? { allow: allowDomains } : options.network,
      // Probing runs three or four runner processes; keep successful probes between invocations.
      ...(hostEnv.SUAVEPLAN_SANDBOX_PROBE_CACHE === "off" ? {} : { probeCache: createFileProbeCache() }),
    });
  } catch (error) {
    if (isSuaveplanError(error))
      throw new UsageError(`--allow-domain: ${error.message.replace(/^LocalSandboxProvider: /, "")}`);
    throw error;
  }
  const stop = new AbortController();
  let stopped: StopReason | undefined;
  const unregister = io.onStop?.((reason) => {
    stopped = reason;
    stop.abort();
  });
  try {
    const result = await runConfinedBash(
      shellQuote(argv),
      {
        ...policy,
        ...(policy.mode === "danger-full-access" ? {} : { writableRoots, denyRead }),
      } as SandboxExecutionPolicy,
      {
        provider,
        cwd: options.workspace === undefined ? io.cwd : policy.workspaceRoot,
        env,
        timeout: options.timeoutMs ?? MAX_DURATION_MS,
        signal: stop.signal,
        ...(options.json ? {} : { onStdout: io.stdout, onStderr: io.stderr }),
      },
    );
    const timedOut = result.timedOut && stopped === undefined;
    if (options.json) {
      io.stdout(
        `${JSON.stringify({ ...result, timedOut, interrupted: stopped ?? null, mode: policy.mode, workspaceRoot: policy.workspaceRoot }, null, 2)}\n`,
      );
    } else {
      const where = `${result.backend ?? "unconfined"}, enforcement ${result.enforcement}`;
      if (stopped !== undefined) {
        io.stderr(
          `[interrupted] ${stopped === "EPIPE" ? "output pipe closed" : stopped}: the confined command was killed (${policy.mode} via ${where})\n`,
        );
      } else if (timedOut) {
        io.stderr(
          `[timeout] killed after ${formatMs(options.timeoutMs ?? 0)} (${policy.mode} via ${where})\n`,
        );
      } else {
        const detail = result.detail ? `: ${result.detail}` : "";
        const reason = result.reason !== undefined ? `: ${result.reason}` : "";
        io.stderr(
          `[${result.outcome}${reason}] exit ${result.exitCode ?? result.signal} (${policy.mode} via ${where})${detail}\n`,
        );
      }
    }
    if (stopped !== undefined) return STOP_EXIT_CODES[stopped];
    if (timedOut) return EXEC_EXIT_CODES.timeout;
    if (result.outcome === "runner-failure") return EXEC_EXIT_CODES.sandboxFailure;
    if (result.exitCode !== null) return result.exitCode;
    return result.signal !== null ? 128 + (constants.signals[result.signal] ?? 0) : 1;
  } catch (error) {
    if (isSuaveplanError(error)) {
      io.stderr(`error: ${error.message}\n`);
      return error.code === "SANDBOX_UNAVAILABLE" ? EXEC_EXIT_CODES.sandboxFailure : EXEC_EXIT_CODES.usage;
    }
    throw error;
  } finally {
    unregister?.();
    provider.dispose();
  }
}

/**
 * The command's environment: the caller's, sanitised (no secrets, no
 * identity keys), then `HOME`, `USER`, `LANG`, `TERM` and `PATH` passed
 * through, then each `--env NAME` (the caller's value, when set) or `--env NAME=VALUE`.
 */
export function commandEnvironment(
  specs: readonly string[],
  hostEnv: NodeJS.ProcessEnv,
): Record<string, string> {
  const env = sanitisedEnvironment(hostEnv);
  for (const name of PASSED_THROUGH_ENV) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  for (const spec of specs) {
    const eq = spec.indexOf("=");
    const name = eq === -1 ? spec : spec.slice(0, eq);
    if (!ENV_NAME.test(name)) throw new UsageError(`--env ${spec}: NAME must match [A-Za-z_][A-Za-z0-9_]*`);
    const value = eq === -1 ? hostEnv[name] : spec.slice(eq + 1);
    if (value?.includes("\0")) throw new UsageError(`--env ${name}: the value holds a NUL byte`);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

function existingDirectory(path: string, cwd: string): string {
  const absolute = resolve(cwd, path);
  try {
    const real = realpathSync.native(absolute);
    if (statSync(real).isDirectory()) return real;
  } catch (error) {
    throw new UsageError(
      `--allow-write ${path}: does not resolve (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  throw new UsageError(`--allow-write ${path}: not a directory`);
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** `suaveplan-sandbox probe`: which backends can run here, their enforcement, and why not. */
export async function probeCommand(options: { json: boolean }, io: CliIo): Promise<ExitCode> {
  const provider = new LocalSandboxProvider();
  try {
    const probes = provider.probe();
    if (options.json) {
      io.stdout(`${JSON.stringify(probes, null, 2)}\n`);
    } else {
      const yesNo = (value: boolean | undefined): string => (value === true ? "yes" : "no");
      for (const p of probes) {
        const state = p.available
          ? `available, enforcement ${p.enforcement ?? "?"}, network deny ${yesNo(p.networkDeny)}, domain allow-list ${p.domainAllowList ?? "no"}, deny-read ${yesNo(p.denyRead)}, pty ${yesNo(p.pty)}`
          : "unavailable";
        io.stdout(`${p.backend.padEnd(15)} ${state}${p.reason ? ` — ${p.reason}` : ""}\n`);
      }
    }
    return probes.some((p) => p.available) ? 0 : 1;
  } finally {
    provider.dispose();
  }
}
