import { spawn } from "node:child_process";
import { isAbsolute } from "node:path";
import { StringDecoder } from "node:string_decoder";
import {
  type ConfinedArgv,
  type ConfinedRunDialect,
  type ConfinedRunOutcome,
  classifyConfinedRun,
  type SandboxEnforcement,
  type SandboxExecutionPolicy,
  SandboxPolicyError,
  type SandboxProvider,
} from "@suaveplan/dsh-sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { truncationSentinel } from "@suaveplan/sandbox-core/resource-limiter";
import { sanitiseEnv } from "@suaveplan/sandbox-spawn";

/**
 * The environment the shell gets: `"sanitised"` (default) is the host
 * environment without secrets and identity keys (the SpawnEngine's
 * `sanitiseEnv` rules); `"inherit"` is the host environment as is; a map is
 * used verbatim. The sandbox's own variables (e.g. `TMPDIR`) are added on top.
 */
export type BashEnvironment = "sanitised" | "inherit" | Readonly<Record<string, string>>;

/** Options of {@link runConfinedBash}. */
export interface RunConfinedBashOptions {
  /** The provider that confines the command (not called under `danger-full-access`). */
  provider: SandboxProvider;
  /** Working directory (default: the policy's workspace root). */
  cwd?: string;
  /** Environment policy (default `"sanitised"`). */
  env?: BashEnvironment;
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
  /** The shell program (default `"bash"`, looked up on the environment's `PATH`). */
  bash?: string;
}

/** What {@link runConfinedBash} returns. */
export interface ConfinedBashResult {
  /** Exit code, or `null` when the shell died on a signal or never started. */
  exitCode: number | null;
  /** The signal that ended the shell, if any. */
  signal: NodeJS.Signals | null;
  /** Stdout text (bounded). */
  stdout: string;
  /** Stderr text (bounded). */
  stderr: string;
  /** `ok`, `denied` (the sandbox blocked a file effect), `runner-failure` (the sandbox itself failed) or `failed`. */
  outcome: ConfinedRunOutcome;
  /** The stderr line (or spawn error) that proved `denied` / `runner-failure`. */
  detail: string | undefined;
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
const UNCONFINED_DIALECT: ConfinedRunDialect = { denialSignatures: [], runnerFailureRules: [] };

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
  checkPolicy(policy);
  if (typeof options !== "object" || options === null || typeof options.provider?.confine !== "function") {
    throw invalid("options.provider must be a SandboxProvider");
  }
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw invalid("options.timeout must be a positive number of ms");
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 0) {
    throw invalid("options.maxOutputBytes must be a non-negative integer");
  }
  const cwd = options.cwd ?? policy.workspaceRoot;
  if (typeof cwd !== "string" || !isAbsolute(cwd)) throw invalid("options.cwd must be an absolute path");
  const baseEnv = environment(options.env ?? "sanitised");
  const argv = [options.bash ?? "bash", "-c", command];

  let confined: ConfinedArgv | undefined;
  if (policy.mode !== "danger-full-access") {
    confined = options.provider.confine(argv, { ...policy, mode: policy.mode });
  }
  try {
    return await spawnAndCollect(confined?.argv ?? argv, {
      cwd,
      env: { ...baseEnv, ...confined?.env },
      timeout,
      maxOutputBytes,
      onStdout: options.onStdout,
      onStderr: options.onStderr,
      signal: options.signal,
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
      if (text.length > 0) this.onText(text);
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

function spawnAndCollect(argv: readonly string[], plan: SpawnPlan): Promise<ConfinedBashResult> {
  const [file, ...args] = argv as [string, ...string[]];
  return new Promise((resolve) => {
    const stdout = new BoundedStream(plan.maxOutputBytes, plan.onStdout);
    const stderr = new BoundedStream(plan.maxOutputBytes, plan.onStderr);
    let timedOut = false;
    let settled = false;
    const child = spawn(file, args, {
      cwd: plan.cwd,
      env: plan.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is already gone
      }
    };
    const stop = (): void => {
      timedOut = true;
      killGroup();
    };
    const timer = setTimeout(stop, plan.timeout);
    plan.signal?.addEventListener("abort", stop, { once: true });
    if (plan.signal?.aborted === true) stop();
    const finish = (
      result: Omit<ConfinedBashResult, "enforcement" | "backend" | "timedOut" | "truncated">,
    ): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      plan.signal?.removeEventListener("abort", stop);
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
    // When the shell exits, anything it left running in its group is an orphan of this command.
    child.once("exit", killGroup);
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
      });
    });
  });
}

function environment(env: BashEnvironment): Record<string, string> {
  if (env === "sanitised") return sanitiseEnv(process.env);
  if (env === "inherit") {
    return Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
  }
  if (typeof env !== "object" || env === null) {
    throw invalid('options.env must be "sanitised", "inherit" or a map of strings');
  }
  for (const [key, value] of Object.entries(env)) {
    if (typeof value !== "string") throw invalid(`options.env.${key} must be a string`);
  }
  return { ...env };
}

function checkPolicy(policy: SandboxExecutionPolicy): void {
  if (typeof policy !== "object" || policy === null) throw new SandboxPolicyError("policy must be an object");
  if (!["read-only", "workspace-write", "danger-full-access"].includes(policy.mode)) {
    throw new SandboxPolicyError(
      'policy.mode must be "read-only", "workspace-write" or "danger-full-access"',
    );
  }
  if (typeof policy.workspaceRoot !== "string" || !isAbsolute(policy.workspaceRoot)) {
    throw new SandboxPolicyError("policy.workspaceRoot must be an absolute path");
  }
}

function invalid(message: string): SandboxError {
  return new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, `runConfinedBash: ${message}`);
}
