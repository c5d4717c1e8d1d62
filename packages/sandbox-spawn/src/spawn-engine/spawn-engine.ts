import { type SpawnOptions, spawn } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { toGuestScript } from "@suaveplan/sandbox-core/guest-script";
import { LogCollector, truncationSentinel } from "@suaveplan/sandbox-core/resource-limiter";
import { parseSandboxConfig, parseSandboxModule, parseSandboxOptions } from "@suaveplan/sandbox-core/schemas";
import type {
  EngineCapabilities,
  LogEntry,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { buildChildArgs, heapMiB, isNodeRuntimeVariable } from "../internal/node-args.js";
import { maxLogLines, type RunnerModule } from "../runner/protocol.js";
import { type ChildLogFrame, type ChildOutcome, raceChild, type SpawnedChild } from "./race-child.js";
import { sanitiseEnv } from "@suaveplan/sandbox-core/env";

/**
 * Starts a child process; the seam tests use for what a real child cannot
 * produce on demand. Same shape as `node:child_process.spawn`, the default.
 */
export type ProcessSpawner = (
  command: string,
  args: readonly string[],
  options: SpawnOptions,
) => SpawnedChild;

/** Constructor options of {@link SpawnEngine}. */
export interface SpawnEngineOptions {
  /** Wall-clock limit per execution, in ms (sync code, promises and timers together). Default 5000. */
  timeout?: number;
  /** V8 heap limit of each child, in bytes; becomes `--max-old-space-size` (whole MiB, at least 8). Default 128 MiB. */
  memoryLimit?: number;
  /** Console output cap per execution, in UTF-8 bytes. Default 1 MiB. */
  maxOutputSize?: number;
  /** Absolute path of the runner script the child runs. Default: this package's `dist/runner-main.js`. */
  runnerPath?: string;
  /** Node binary the child runs. Default `process.execPath`. */
  execPath?: string;
  /** Environment to sanitise for the child (see {@link sanitiseEnv}). Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Starts the child. Default `node:child_process.spawn`. */
  spawner?: ProcessSpawner;
  /** Keep one pre-started, single-use child ready so its boot is off the caller's path. Default true. */
  preStart?: boolean;
  /** Limit for a child to boot and start the guest code, in ms; not counted in `timeout`. Default 10000. */
  startTimeout?: number;
}

interface Limits {
  timeout: number;
  memoryLimit: number;
  maxOutputSize: number;
}

interface StoredModule {
  name: string;
  exports?: unknown;
  source?: string;
}

interface LiveChild {
  readonly child: SpawnedChild;
  /** `--max-old-space-size` the child was started with, in MiB. */
  readonly heapMiB: number;
  /** Resolves once the child closed (exited and its pipes ended), or its spawn failed. */
  readonly closed: Promise<void>;
  /** Exited, errored or already used: never hand it out (again). */
  dead: boolean;
}

const KIB = 1024;
const MAX_STDERR_BYTES = 16 * KIB;
const DEFAULT_START_TIMEOUT_MS = 10_000;
const OUT_OF_MEMORY = /heap out of memory|javascript OOM|Reached heap limit/i;
const STDIO: SpawnOptions["stdio"] = ["pipe", "ignore", "pipe", "pipe"];
const OPTION_KEYS = new Set([
  "timeout",
  "memoryLimit",
  "maxOutputSize",
  "runnerPath",
  "execPath",
  "env",
  "spawner",
  "preStart",
  "startTimeout",
]);

const CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: false,
  tier: "child process under the Node permission model (reads only the runner file; no writes, child processes, workers or addons; network not restricted) — a security boundary only when also confined by the OS (e.g. dsh-sandbox-local)",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
});

/**
 * Runs JavaScript in a fresh Node.js child process per execution — the
 * strongest isolation this package family offers without an isolate, and a
 * security boundary only when the child is also confined by the OS.
 *
 * The child runs `runner-main.js` under the Node permission model with a
 * sanitised environment and a V8 heap limit; the code is evaluated in strict
 * mode inside a `vm` context with no code generation from strings. The
 * request goes over stdin as JSON; console lines and the result come back as
 * JSON frames on a dedicated pipe (fd 3) the guest cannot reach. The timeout
 * kills the child with SIGKILL. One pre-started child is kept ready (each is
 * used once), so the ~70 ms boot of a Node process is not on the caller's path.
 *
 * @example
 * await using engine = new SpawnEngine({ timeout: 1000 });
 * const { result } = await engine.execute("2 + 3"); // 5
 */
export class SpawnEngine implements SandboxEngine, AsyncDisposable {
  /** Always `"spawn"`. */
  readonly name = "spawn" as const;
  /** What this engine guarantees. */
  readonly capabilities: EngineCapabilities = CAPABILITIES;

  private readonly limits: Limits;
  private readonly runnerPath: string;
  private readonly execPath: string;
  private readonly childEnv: Record<string, string>;
  private readonly spawner: ProcessSpawner;
  private readonly preStart: boolean;
  private readonly startTimeout: number;
  private readonly modules = new Map<string, StoredModule>();
  private readonly live = new Set<LiveChild>();
  private spare: LiveChild | undefined;
  private spareMemoryLimit: number;
  private refill: NodeJS.Immediate | undefined;
  private destroyPromise: Promise<void> | undefined;

  /**
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when an option is malformed,
   * or when the default runner script is missing (build the package).
   */
  constructor(options: SpawnEngineOptions = {}) {
    for (const key of Object.keys(options)) {
      if (!OPTION_KEYS.has(key)) invalidConfig(key, "is not a SpawnEngine option");
    }
    const config = parseSandboxConfig(
      withoutUndefined({
        timeout: options.timeout,
        memoryLimit: options.memoryLimit,
        maxOutputSize: options.maxOutputSize,
      }),
    );
    this.limits = {
      timeout: config.timeout,
      memoryLimit: config.memoryLimit,
      maxOutputSize: config.maxOutputSize,
    };
    this.spareMemoryLimit = config.memoryLimit;
    this.spawner = options.spawner ?? ((command, args, spawnOptions) => spawn(command, args, spawnOptions));
    if (typeof this.spawner !== "function") invalidConfig("spawner", "must be a function");
    this.execPath = options.execPath ?? process.execPath;
    if (typeof this.execPath !== "string" || this.execPath === "")
      invalidConfig("execPath", "must be a path");
    this.runnerPath = resolveRunnerPath(options.runnerPath, options.spawner === undefined);
    const env = options.env ?? process.env;
    if (typeof env !== "object" || env === null) invalidConfig("env", "must be an object of strings");
    this.childEnv = Object.fromEntries(
      Object.entries(sanitiseEnv(env)).filter(([key]) => !isNodeRuntimeVariable(key)),
    );
    this.preStart = options.preStart ?? true;
    if (typeof this.preStart !== "boolean") invalidConfig("preStart", "must be a boolean");
    this.startTimeout = options.startTimeout ?? DEFAULT_START_TIMEOUT_MS;
    if (!Number.isSafeInteger(this.startTimeout) || this.startTimeout < 1) {
      invalidConfig("startTimeout", "must be a positive integer (ms)");
    }
    this.scheduleSpare();
  }

  /** Absolute path of the runner script each child runs (the only file it may read). */
  getRunnerPath(): string {
    return this.runnerPath;
  }

  /** A copy of the environment every child receives: sanitised, and without `NODE_*` variables. */
  getSanitisedEnv(): Record<string, string> {
    return { ...this.childEnv };
  }

  /**
   * Run `code` in a fresh child process. Resolves a result for every failure
   * of the code or the child (and with `SANDBOX_ENGINE_DISPOSED` after
   * destroy); rejects only when the arguments are invalid (`SANDBOX_INVALID_OPTIONS`).
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    const startedAt = performance.now();
    if (this.destroyPromise !== undefined) return disposedResult();
    const opts = options === undefined ? {} : parseSandboxOptions(options);
    if (typeof code !== "string") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        `Invalid code: expected a string (got ${typeof code})`,
      );
    }
    if (
      context !== undefined &&
      (context === null || typeof context !== "object" || Array.isArray(context))
    ) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        `Invalid context: expected an object of globals (got ${context === null ? "null" : typeof context})`,
      );
    }
    const limits: Limits = {
      timeout: opts.timeout ?? this.limits.timeout,
      memoryLimit: opts.memoryLimit ?? this.limits.memoryLimit,
      maxOutputSize: opts.maxOutputSize ?? this.limits.maxOutputSize,
    };
    const logs = new HostLogs(limits.maxOutputSize, opts.onLog);
    const result = (fields: Omit<SandboxResult, "duration" | "logs">): SandboxResult => ({
      ...fields,
      duration: performance.now() - startedAt,
      logs: logs.entries,
    });

    const source = toGuestScript(code).source;
    let input: string;
    try {
      input = encodeRequest(source, context ?? {}, [...this.modules.values()], limits);
    } catch (error) {
      return result(
        failure(
          SANDBOX_CODES.ENGINE_FAILED,
          `context is not transferable into the child process (values must be JSON data): ${reasonOf(error)}`,
        ),
      );
    }

    let entry: LiveChild;
    try {
      entry = this.takeSpare(limits.memoryLimit) ?? this.spawnChild(limits.memoryLimit);
    } catch (error) {
      return result(
        failure(
          SANDBOX_CODES.SPAWN_FAILED,
          `Could not start the child process ${this.execPath}: ${reasonOf(error)}. Check execPath and the spawner`,
        ),
      );
    }
    entry.dead = true; // single use
    holdOpen(entry.child, true);
    this.spareMemoryLimit = limits.memoryLimit;
    const outcome = await raceChild(entry.child, {
      input,
      timeoutMs: limits.timeout,
      startTimeoutMs: this.startTimeout,
      maxProtocolBytes: maxProtocolBytes(limits),
      maxStderrBytes: MAX_STDERR_BYTES,
      onLog: (frame) => logs.accept(frame),
    });
    this.scheduleSpare();
    return result(this.describeOutcome(outcome, limits));
  }

  /**
   * Make a module available as a global of the same name in later executions.
   * `exports` is copied now, as JSON data; `source` is guest JavaScript that
   * assigns `module.exports`, evaluated inside the sandbox before the code.
   *
   * @throws SandboxError `SANDBOX_INVALID_MODULE` when the module is malformed or its exports are not JSON data,
   * `SANDBOX_ENGINE_DISPOSED` after {@link destroy}.
   */
  registerModule(module: SandboxModule): void {
    if (this.destroyPromise !== undefined) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "SpawnEngine.registerModule: the engine was destroyed; create a new SpawnEngine",
      );
    }
    const parsed = parseSandboxModule(module);
    const stored: StoredModule = { name: parsed.name };
    if (parsed.exports !== undefined) {
      try {
        stored.exports = JSON.parse(toJson(parsed.exports));
      } catch (error) {
        throw new SandboxError(
          SANDBOX_CODES.INVALID_MODULE,
          `Invalid module ${parsed.name}: exports must be JSON data to cross into the child process (${reasonOf(error)})`,
          { cause: error },
        );
      }
    }
    if (parsed.source !== undefined) stored.source = parsed.source;
    this.modules.set(parsed.name, stored);
  }

  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean {
    return this.modules.delete(name);
  }

  /** Drop registered modules. (The pre-started child holds no state: it has not received any code.) */
  reset(): void {
    this.modules.clear();
  }

  /** Kill the pre-started and any running child (running executions resolve `SANDBOX_ENGINE_DISPOSED`) and wait until they are gone. Idempotent. */
  destroy(): Promise<void> {
    this.destroyPromise ??= this.destroyNow();
    return this.destroyPromise;
  }

  /** Same as {@link destroy}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private async destroyNow(): Promise<void> {
    if (this.refill !== undefined) clearImmediate(this.refill);
    this.refill = undefined;
    this.spare = undefined;
    const children = [...this.live];
    for (const entry of children) {
      entry.dead = true;
      // Re-ref the (possibly unref'd spare) child so the event loop stays alive until it has closed;
      // otherwise `await engine.destroy()` at the end of a script ends the process with exit code 13.
      holdOpen(entry.child, true);
      killQuietly(entry.child);
    }
    await Promise.all(children.map((entry) => entry.closed));
  }

  private describeOutcome(outcome: ChildOutcome, limits: Limits): Omit<SandboxResult, "duration" | "logs"> {
    if (outcome.kind === "ok") {
      const { output } = outcome;
      if (output.success) {
        const ok: Omit<SandboxResult, "duration" | "logs"> = { success: true, memoryUsed: output.memoryUsed };
        if (output.result !== undefined) ok.result = output.result;
        return ok;
      }
      // The runner bounds itself too (for when its host is gone); the host's SIGKILL usually comes first.
      if (output.errorKind === "timeout") return timeoutFailure(limits);
      if (output.errorKind === "input") {
        return failure(SANDBOX_CODES.SPAWN_FAILED, `The runner refused the request: ${output.error}`);
      }
      return {
        success: false,
        error: output.error,
        errorCode: SANDBOX_CODES.ENGINE_FAILED,
        memoryUsed: output.memoryUsed,
      };
    }
    if (this.destroyPromise !== undefined) {
      return failure(SANDBOX_CODES.ENGINE_DISPOSED, "The SpawnEngine was destroyed while the code ran");
    }
    if (outcome.kind === "timeout") {
      return outcome.phase === "run"
        ? timeoutFailure(limits)
        : failure(
            SANDBOX_CODES.SPAWN_FAILED,
            `The child process did not start the code within ${this.startTimeout} ms (startTimeout); the machine may be overloaded${stderrNote(outcome.stderr)}`,
          );
    }
    if (OUT_OF_MEMORY.test(outcome.stderr)) {
      return failure(
        SANDBOX_CODES.MEMORY_EXCEEDED,
        `Execution exceeded the memory limit of ${heapMiB(limits.memoryLimit)} MiB (memoryLimit ${limits.memoryLimit} bytes): the child's V8 heap ran out and the child ended. Allocate less or raise memoryLimit`,
      );
    }
    if (outcome.kind === "parse-error" && outcome.error !== undefined) {
      return failure(
        SANDBOX_CODES.SPAWN_FAILED,
        `Could not run the child process ${this.execPath}: ${outcome.error.message}. Check execPath and runnerPath`,
      );
    }
    const how =
      outcome.signal !== null
        ? `was killed by ${outcome.signal}`
        : `exited with code ${outcome.exitCode === null ? "unknown" : outcome.exitCode}`;
    const why = outcome.kind === "parse-error" ? `broke the protocol (${outcome.reason}) and` : "";
    return failure(
      SANDBOX_CODES.SPAWN_FAILED,
      `The child process ${why} ${how} before sending a result${stderrNote(outcome.stderr)}`.replace(
        / {2,}/g,
        " ",
      ),
    );
  }

  private takeSpare(memoryLimit: number): LiveChild | undefined {
    const spare = this.spare;
    this.spare = undefined;
    if (spare === undefined) return undefined;
    if (!spare.dead && spare.heapMiB === heapMiB(memoryLimit)) return spare;
    spare.dead = true;
    killQuietly(spare.child);
    return undefined;
  }

  private spawnChild(memoryLimit: number): LiveChild {
    const child = this.spawner(this.execPath, buildChildArgs(this.runnerPath, memoryLimit), {
      stdio: STDIO,
      env: this.childEnv,
      windowsHide: true,
    });
    const entry: LiveChild = {
      child,
      heapMiB: heapMiB(memoryLimit),
      dead: false,
      closed: new Promise<void>((resolveClosed) => {
        const markDead = (): void => {
          entry.dead = true;
        };
        child.on("exit", markDead);
        child.on("error", markDead); // also keeps a failed spawn from throwing as an unhandled 'error'
        child.on("close", () => {
          entry.dead = true;
          this.live.delete(entry);
          resolveClosed();
        });
      }),
    };
    // A pipe error must never surface as an unhandled 'error' in the host; the child's exit tells the story.
    for (let fd = 0; fd < child.stdio.length; fd++) child.stdio[fd]?.on("error", ignore);
    this.live.add(entry);
    return entry;
  }

  private scheduleSpare(): void {
    if (!this.preStart || this.destroyPromise !== undefined || this.refill !== undefined) return;
    this.refill = setImmediate(() => {
      this.refill = undefined;
      this.startSpare();
    });
    this.refill.unref();
  }

  private startSpare(): void {
    if (this.destroyPromise !== undefined || (this.spare !== undefined && !this.spare.dead)) return;
    if (this.spare !== undefined) killQuietly(this.spare.child);
    try {
      const entry = this.spawnChild(this.spareMemoryLimit);
      holdOpen(entry.child, false); // an idle spare never keeps the host alive
      this.spare = entry;
    } catch {
      this.spare = undefined; // the next execute spawns its own child and reports the failure
    }
  }
}

/**
 * Host half of the output budget: a {@link LogCollector} (cuts at
 * `maxOutputSize` bytes and appends the sentinel), plus the runner's
 * `truncated` frame (sent when the line cap ends forwarding first).
 */
class HostLogs {
  private readonly collector: LogCollector;
  private closed = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLog: ((entry: LogEntry) => void) | undefined,
  ) {
    this.collector = new LogCollector(maxBytes, onLog);
  }

  get entries(): LogEntry[] {
    return this.collector.entries;
  }

  accept(frame: ChildLogFrame): void {
    if (this.closed) return;
    if (frame.type === "log") {
      if (!this.collector.push(frame.level, frame.message)) this.closed = this.collector.truncated;
      return;
    }
    this.closed = true;
    if (this.collector.truncated) return;
    const sentinel: LogEntry = { level: "warn", message: truncationSentinel(this.maxBytes) };
    this.collector.entries.push(sentinel);
    this.onLog?.(sentinel);
  }
}

function resolveRunnerPath(option: string | undefined, realSpawner: boolean): string {
  if (option !== undefined && (typeof option !== "string" || option === "")) {
    invalidConfig("runnerPath", "must be a path");
  }
  const candidates =
    option === undefined
      ? ["./runner-main.js", "../../dist/runner-main.js"].map((url) =>
          fileURLToPath(new URL(url, import.meta.url)),
        )
      : [isAbsolute(option) ? option : resolve(option)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    if (!realSpawner) return candidates[0] as string;
    if (option === undefined) {
      invalidConfig(
        "runnerPath",
        `was not given and the runner script is missing (looked for ${candidates.join(", ")}); build @suaveplan/sandbox-spawn (pnpm build) or pass runnerPath`,
      );
    }
    invalidConfig("runnerPath", `does not exist (${candidates[0]})`);
  }
  const real = realpathSync(found);
  // Node's --allow-fs-read takes a comma-separated list.
  if (real.includes(",")) invalidConfig("runnerPath", `must not contain a comma (${real})`);
  return real;
}

function invalidConfig(field: string, reason: string): never {
  throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, `Invalid SpawnEngine option ${field}: ${reason}`);
}

function failure(code: SandboxCode, message: string): Omit<SandboxResult, "duration" | "logs"> {
  return { success: false, error: new SandboxError(code, message).message, errorCode: code };
}

function timeoutFailure(limits: Limits): Omit<SandboxResult, "duration" | "logs"> {
  return failure(
    SANDBOX_CODES.TIMEOUT,
    `Execution timed out after ${limits.timeout} ms; the child process was killed with SIGKILL. Raise timeout or shorten the work`,
  );
}

function disposedResult(): SandboxResult {
  return {
    ...failure(
      SANDBOX_CODES.ENGINE_DISPOSED,
      "The SpawnEngine was destroyed; create a new engine to run more code",
    ),
    duration: 0,
    logs: [],
  };
}

function stderrNote(stderr: string): string {
  const text = stderr.trim();
  if (text === "") return "";
  const excerpt = text.length > 300 ? `${text.slice(0, 300)}…` : text;
  return `. Child stderr: ${excerpt.replace(/\s+/g, " ")}`;
}

/** JSON text of host data; throws naming the first value JSON cannot carry (function, symbol, BigInt, cycle). */
function toJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, (key, item: unknown) => {
      const type = typeof item;
      if (type === "function" || type === "symbol" || type === "bigint") {
        throw new TypeError(`${type}${key === "" ? "" : ` at key ${JSON.stringify(key)}`}`);
      }
      return item;
    });
  } catch (error) {
    if (error instanceof TypeError && /circular/i.test(error.message)) throw new TypeError("cyclic");
    throw error;
  }
  if (text === undefined) throw new TypeError("undefined");
  return text;
}

function encodeRequest(
  code: string,
  context: Record<string, unknown>,
  modules: RunnerModule[],
  limits: Limits,
): string {
  const contextJson = toJson(context);
  return `{"code":${JSON.stringify(code)},"context":${contextJson},"modules":${JSON.stringify(modules)},"maxOutputSize":${limits.maxOutputSize},"timeoutMs":${limits.timeout}}\n`;
}

/** fd 3 bytes tolerated: the result (bounded by the child's heap) plus the worst-case escaped log budget. */
function maxProtocolBytes(limits: Limits): number {
  return (
    2 * limits.memoryLimit + 6 * limits.maxOutputSize + maxLogLines(limits.maxOutputSize) * 64 + 64 * KIB
  );
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function killQuietly(child: SpawnedChild): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
}

/** `ref` (a running execution keeps the host alive) or `unref` the child and its pipes. */
function holdOpen(child: SpawnedChild, hold: boolean): void {
  const method = hold ? "ref" : "unref";
  child[method]?.();
  for (let fd = 0; fd < child.stdio.length; fd++) {
    const stream = child.stdio[fd] as (Readable | Writable) & { ref?: () => void; unref?: () => void };
    if (stream !== null && stream !== undefined) stream[method]?.();
  }
}

function ignore(): void {}

function withoutUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
