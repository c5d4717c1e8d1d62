import { spawn } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, normalize, sep } from "node:path";
import { StringDecoder } from "node:string_decoder";
import {
  type ConfinedArgv,
  type ConfinedRunDialect,
  type ConfinedRunOutcome,
  classifyConfinedRun,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  type SandboxPolicy,
  SandboxPolicyError,
  type SandboxProvider,
} from "@suaveplan/dsh-sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { truncationSentinel } from "@suaveplan/sandbox-core/resource-limiter";
import { reapRun, stdioLinksOf } from "./reap.js";
import { sanitisedEnvironment } from "./sanitised-environment.js";

/**
 * The environment the command gets: `"sanitised"` (default) is the host
 * environment without secrets and identity keys (see
 * {@link sanitisedEnvironment}); `"inherit"` is the host environment as is; a
 * map is used verbatim. The sandbox's own variables (e.g. `TMPDIR`) are added on top.
 */
export type ProcessEnvironment = "sanitised" | "inherit" | Readonly<Record<string, string>>;

/** Options of {@link runConfinedCommand} (and, with a shell added, of `runConfinedBash` / `runConfinedPwsh`). */
export interface RunConfinedCommandOptions {
  /** The provider that confines the command (not called under `danger-full-access`). */
  provider: SandboxProvider;
  /** Working directory (default: the policy's workspace root). */
  cwd?: string;
  /** Environment policy (default `"sanitised"`). */
  env?: ProcessEnvironment;
  /** Wall-clock limit in ms; on expiry the whole process group is killed with SIGKILL. Default 60 000. */
  timeout?: number;
  /** Bytes kept per stream; the rest is dropped and a truncation sentinel appended. Default 1 MiB. */
  maxOutputBytes?: number;
  /** Receives stdout text as it arrives (only the part kept within `maxOutputBytes`). */
  onStdout?: (chunk: string) => void;
  /** Receives stderr text as it arrives (only the part kept within `maxOutputBytes`). */
  onStderr?: (chunk: string) => void;
  /** Aborting kills the whole process group, like a timeout. */
  signal?: AbortSignal;
}

/** What {@link runConfinedCommand} returns. */
export interface ConfinedCommandResult {
  /** Exit code, or `null` when the process died on a signal or never started. */
  exitCode: number | null;
  /** The signal that ended the process, if any. */
  signal: NodeJS.Signals | null;
  /** Stdout text (bounded). */
  stdout: string;
  /** Stderr text (bounded). */
  stderr: string;
  /**
   * `ok`, `denied` (the sandbox blocked a file effect, or a connection under
   * `network: "deny"`), `runner-failure` (the sandbox itself failed) or `failed`.
   */
  outcome: ConfinedRunOutcome;
  /** The stderr line (or spawn error) that proved `denied` / `runner-failure`. */
  detail: string | undefined;
  /** `"network"` when `denied` was a connection the cut network refused; else undefined. */
  reason: "network" | undefined;
  /** The enforcement of the backend used; `"none"` when the policy was `danger-full-access`. */
  enforcement: SandboxEnforcement | "none";
  /** The backend used, or `undefined` when the command ran unconfined (`danger-full-access`). */
  backend: string | undefined;
  /** True when the timeout (or the abort signal) killed the process group. */
  timedOut: boolean;
  /** True when stdout or stderr exceeded `maxOutputBytes`. */
  truncated: boolean;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** The largest delay `setTimeout` honours; a larger one would fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;
/**
 * How long the output pipes may stay open after the shell exited (or was
 * killed) before the processes still holding them are hunted down, and again
 * before the pipes are abandoned so the call always returns.
 */
const PIPE_GRACE_MS = 200;
const UNCONFINED_DIALECT: ConfinedRunDialect = { denialSignatures: [], runnerFailureRules: [] };
/**
 * Spawn `argv` confined by `options.provider` under `policy` and attribute
 * the result — the runtime every shell consumer shares (`runConfinedBash`,
 * `runConfinedPwsh`). The child gets stdio only (`["ignore", "pipe", "pipe"]`)
 * in its own process group; output is streamed and bounded; the timeout kills
 * the whole group, and on Linux every escaped descendant is reaped. Under
 * `danger-full-access` — and only then — `argv` runs unconfined and the
 * provider is not called. A provider that cannot confine throws
 * `SandboxUnavailableError` and nothing is spawned. Provider-specific policy
 * extensions (e.g. the local provider's `writableRoots`, `denyRead`) are
 * passed to `confine`, snapshotted once.
 * @param caller - the name error messages start with.
 * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) for a malformed policy.
 * @throws SandboxError (`SANDBOX_INVALID_OPTIONS`) for a malformed argv or option.
 * @throws SandboxUnavailableError (`SANDBOX_UNAVAILABLE`) when the provider cannot confine here.
 */
export async function runConfinedCommand(
  argv: readonly string[],
  policy: SandboxExecutionPolicy,
  options: RunConfinedCommandOptions,
  caller = "runConfinedCommand",
): Promise<ConfinedCommandResult> {
  const invalid = (message: string): SandboxError =>
    new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, `${caller}: ${message}`);
  if (
    !Array.isArray(argv) ||
    argv.length === 0 ||
    argv.some((arg) => typeof arg !== "string" || arg.includes("\0")) ||
    argv[0] === ""
  ) {
    throw invalid("argv must be a non-empty array of strings without NUL bytes");
  }
  // Read the policy once: every later decision (confine or not, which root) uses this snapshot.
  const { mode, workspaceRoot, sessionId } = checkPolicy(policy);
  const extensions = policyExtensions(policy);
  if (typeof options !== "object" || options === null || typeof options.provider?.confine !== "function") {
    throw invalid("options.provider must be a SandboxProvider");
  }
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  if (typeof timeout !== "number" || !Number.isFinite(timeout) || timeout <= 0)
    throw invalid("options.timeout must be a positive number of ms");
  if (timeout > MAX_TIMEOUT_MS) throw invalid(`options.timeout must be at most ${MAX_TIMEOUT_MS} ms`);
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 0) {
    throw invalid("options.maxOutputBytes must be a non-negative integer");
  }
  for (const name of ["onStdout", "onStderr"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "function") {
      throw invalid(`options.${name} must be a function`);
    }
  }
  const abort = options.signal;
  if (
    abort !== undefined &&
    (typeof abort !== "object" || abort === null || typeof abort.addEventListener !== "function")
  ) {
    throw invalid("options.signal must be an AbortSignal");
  }
  const cwd = workingDirectory(options.cwd, workspaceRoot, invalid);
  const baseEnv = environment(options.env ?? "sanitised", invalid);
  const command = [...argv];

  let confined: ConfinedArgv | undefined;
  if (mode !== "danger-full-access") {
    const confinedPolicy: SandboxPolicy = { ...extensions, mode, workspaceRoot };
    if (sessionId !== undefined) confinedPolicy.sessionId = sessionId;
    confined = options.provider.confine(command, confinedPolicy);
  }
  try {
    return await spawnAndCollect(confined?.argv ?? command, {
      cwd,
      env: { ...baseEnv, ...confined?.env },
      timeout,
      maxOutputBytes,
      onStdout: options.onStdout,
      onStderr: options.onStderr,
      signal: abort,
      dialect: confined ?? UNCONFINED_DIALECT,
      confinedRun: confined !== undefined,
      enforcement: confined?.enforcement ?? "none",
      backend: confined === undefined ? undefined : (confined.backend ?? "unknown"),
    });
  } finally {
    confined?.dispose?.();
  }
}

interface SpawnPlan {
  cwd: string;
  env: Record<string, string>;
  timeout: number;
  maxOutputBytes: number;
  onStdout: ((chunk: string) => void) | undefined;
  onStderr: ((chunk: string) => void) | undefined;
  signal: AbortSignal | undefined;
  dialect: ConfinedRunDialect;
  confinedRun: boolean;
  enforcement: SandboxEnforcement | "none";
  backend: string | undefined;
}

class BoundedStream {
  readonly #chunks: Buffer[] = [];
  readonly #decoder = new StringDecoder("utf8");
  #bytes = 0;
  truncated = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onText: ((chunk: string) => void) | undefined,
    private readonly onCallbackError: (error: unknown) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.truncated) return;
    const room = this.maxBytes - this.#bytes;
    const kept = chunk.byteLength > room ? chunk.subarray(0, Math.max(0, room)) : chunk;
    if (chunk.byteLength > room) this.truncated = true;
    if (kept.byteLength === 0) return;
    this.#chunks.push(kept);
    this.#bytes += kept.byteLength;
    if (this.onText !== undefined) {
      const text = this.#decoder.write(kept);
      try {
        if (text.length > 0) this.onText(text);
      } catch (error) {
        this.onCallbackError(error);
      }
    }
  }

  text(): string {
    const bytes = Buffer.concat(this.#chunks);
    if (!this.truncated) return bytes.toString("utf8");
    // Step back over a character cut at the budget (continuation bytes are 10xxxxxx).
    let end = bytes.byteLength;
    let lead = end - 1;
    while (lead > 0 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
    const first = bytes[lead] ?? 0;
    const need = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
    if (lead + need > end) end = lead;
    return `${bytes.subarray(0, end).toString("utf8")}${truncationSentinel(this.maxBytes)}`;
  }
}

function spawnAndCollect(argv: readonly string[], plan: SpawnPlan): Promise<ConfinedCommandResult> {
  const [file, ...args] = argv as [string, ...string[]];
  return new Promise((resolve, reject) => {
    let callbackError: { error: unknown } | undefined;
    const callbackFailed = (error: unknown): void => {
      if (callbackError !== undefined) return;
      callbackError = { error };
      terminate();
    };
    const stdout = new BoundedStream(plan.maxOutputBytes, plan.onStdout, callbackFailed);
    const stderr = new BoundedStream(plan.maxOutputBytes, plan.onStderr, callbackFailed);
    let timedOut = false;
    let exited = false;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const child = spawn(file, args, {
      cwd: plan.cwd,
      env: plan.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    // Read while the runner still holds them: processes that later escape the
    // group or session are found again by the pipe ends they keep open.
    const identity = { root: child.pid ?? -1, stdioLinks: stdioLinksOf(child.pid) };
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is already gone
      }
    };
    const terminate = (): void => {
      if (child.pid === undefined) return;
      reapRun(identity, true);
      killGroup();
    };
    const stop = (): void => {
      if (exited) return;
      timedOut = true;
      terminate();
    };
    const timer = setTimeout(stop, plan.timeout);
    plan.signal?.addEventListener("abort", stop, { once: true });
    if (plan.signal?.aborted === true) stop();
    const finish = (
      result: Omit<ConfinedCommandResult, "enforcement" | "backend" | "timedOut" | "truncated">,
    ): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      plan.signal?.removeEventListener("abort", stop);
      if (callbackError !== undefined) {
        reject(callbackError.error);
        return;
      }
      resolve({
        ...result,
        enforcement: plan.enforcement,
        backend: plan.backend,
        timedOut,
        truncated: stdout.truncated || stderr.truncated,
      });
    };
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.once("exit", () => {
      exited = true;
      clearTimeout(timer);
      // Anything the shell left running in its group or session is an orphan of this command.
      killGroup();
      reapRun(identity, false);
      // A process that escaped both (setsid, double fork) may still hold the
      // output pipes open, and "close" waits for them: find it by those pipes,
      // and if the pipes still do not close, stop waiting for them.
      graceTimer = setTimeout(() => {
        reapRun(identity, true);
        graceTimer = setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
        }, PIPE_GRACE_MS);
      }, PIPE_GRACE_MS);
    });
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // a later error on a started child; "close" reports the result
      const detail = `spawn failed: ${error.code ?? error.message}`;
      finish({
        exitCode: null,
        signal: null,
        stdout: "",
        stderr: "",
        outcome: plan.confinedRun ? "runner-failure" : "failed",
        detail,
        reason: undefined,
      });
    });
    child.once("close", (exitCode: number | null, signal: NodeJS.Signals | null) => {
      const err = stderr.text();
      const classification = classifyConfinedRun({ exitCode, stderr: err }, plan.dialect);
      finish({
        exitCode,
        signal,
        stdout: stdout.text(),
        stderr: err,
        outcome: classification.outcome,
        detail: classification.detail,
        reason: classification.reason,
      });
    });
  });
}

function environment(env: ProcessEnvironment, invalid: (message: string) => Error): Record<string, string> {
  if (env === "sanitised") return sanitisedEnvironment();
  if (env === "inherit") {
    return Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
  }
  if (typeof env !== "object" || env === null || Array.isArray(env)) {
    throw invalid('options.env must be "sanitised", "inherit" or a map of strings');
  }
  for (const [key, value] of Object.entries(env)) {
    if (key === "" || key.includes("=") || key.includes("\0")) {
      throw invalid(
        `options.env keys must be non-empty names without "=" or NUL bytes, got ${describe(key)}`,
      );
    }
    if (typeof value !== "string") throw invalid(`options.env.${key} must be a string`);
    if (value.includes("\0")) throw invalid(`options.env.${key} must not contain NUL bytes`);
  }
  return { ...env };
}

function checkPolicy(policy: SandboxExecutionPolicy): SandboxExecutionPolicy {
  if (typeof policy !== "object" || policy === null) throw new SandboxPolicyError("policy must be an object");
  const { mode, workspaceRoot, sessionId } = policy;
  if (!["read-only", "workspace-write", "danger-full-access"].includes(mode)) {
    throw new SandboxPolicyError(
      'policy.mode must be "read-only", "workspace-write" or "danger-full-access"',
    );
  }
  if (typeof workspaceRoot !== "string" || !isAbsolute(workspaceRoot)) {
    throw new SandboxPolicyError("policy.workspaceRoot must be an absolute path");
  }
  if (sessionId !== undefined && typeof sessionId !== "string") {
    throw new SandboxPolicyError("policy.sessionId must be a string when present");
  }
  return sessionId === undefined ? { mode, workspaceRoot } : { mode, workspaceRoot, sessionId };
}

/**
 * The provider-specific extensions a policy carries besides the seed's fields
 * (e.g. the local provider's `writableRoots` and `denyRead`), snapshotted
 * once: arrays are copied, so a later change by the caller does not reach
 * `confine`.
 */
function policyExtensions(policy: SandboxExecutionPolicy): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(policy)) {
    if (key === "mode" || key === "workspaceRoot" || key === "sessionId") continue;
    out[key] = Array.isArray(value) ? [...value] : value;
  }
  return out;
}

/**
 * The canonical working directory: `cwd` (default: the workspace root), which
 * must exist, be a directory and lie inside the canonical workspace root.
 */
function workingDirectory(cwd: unknown, workspaceRoot: string, invalid: (message: string) => Error): string {
  const root = canonical(workspaceRoot);
  if (root === undefined) {
    throw new SandboxPolicyError("policy.workspaceRoot must name an existing directory");
  }
  if (cwd === undefined) return root;
  if (typeof cwd !== "string" || !isAbsolute(cwd) || cwd.includes("\0")) {
    throw invalid("options.cwd must be an absolute path");
  }
  const real = canonical(cwd);
  if (real === undefined) throw invalid("options.cwd must name an existing directory");
  if (real !== root && !real.startsWith(root.endsWith(sep) ? root : `${root}${sep}`)) {
    throw invalid("options.cwd must lie inside policy.workspaceRoot");
  }
  return real;
}

function canonical(path: string): string | undefined {
  try {
    const real = normalize(realpathSync.native(path));
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

function describe(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}
