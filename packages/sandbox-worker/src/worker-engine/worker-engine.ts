import { Worker } from "node:worker_threads";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { toGuestScript } from "@suaveplan/sandbox-core/guest-script";
import { LogCollector } from "@suaveplan/sandbox-core/resource-limiter";
import { parseSandboxConfig, parseSandboxModule, parseSandboxOptions } from "@suaveplan/sandbox-core/schemas";
import type {
  EngineCapabilities,
  EngineLimits,
  LogEntry,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
import {
  type FailureKind,
  LOG_LEVELS,
  type RunRequest,
  type WireModule,
  type WorkerMessage,
} from "../internal/protocol.js";
import { resourceLimitsFor } from "../internal/resource-limits.js";
import { workerEntrySource } from "../internal/worker-entry-source.js";

/** Constructor options of {@link WorkerEngine}; defaults come from `SANDBOX_DEFAULTS`. */
export interface WorkerEngineOptions {
  /** Wall-clock limit per execution, in ms (counted from when the worker starts running the code). */
  timeout?: number | undefined;
  /** V8 heap limit per execution, in bytes (enforced through the worker's `resourceLimits`). */
  memoryLimit?: number | undefined;
  /** Cap on captured console output, in bytes. */
  maxOutputSize?: number | undefined;
}

/**
 * How long a worker may take to boot before the execution fails with
 * `SANDBOX_WORKER_FAILED`, in ms. Only a cold start can take this long; the
 * `timeout` budget starts once the worker begins running the code.
 */
export const WORKER_STARTUP_TIMEOUT_MS = 10_000;

const CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: false,
  tier: "worker_threads + node:vm: own V8 heap with resource limits, but the same process — NOT a security boundary",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
});

interface WorkerHandle {
  readonly worker: Worker;
  /** The heap budget (bytes) the worker was started with. */
  readonly memoryLimit: number;
  exited: boolean;
  owner: Execution | undefined;
}

interface ResolvedOptions {
  timeout: number;
  memoryLimit: number;
  maxOutputSize: number;
  onLog: ((entry: LogEntry) => void) | undefined;
}

type Outcome = Omit<SandboxResult, "duration" | "logs">;

/**
 * Runs JavaScript in a fresh `node:worker_threads` Worker per execution, inside
 * a `node:vm` context in that worker (no `require`, `process`, `import()` or
 * message port in scope; code generation from strings disabled).
 *
 * - `memoryLimit` becomes the worker's V8 `resourceLimits`; exceeding it ends
 *   the worker with `SANDBOX_MEMORY_EXCEEDED` while the host carries on.
 * - `timeout` is enforced by `worker.terminate()`, so sync loops, microtask
 *   loops, pending timers and never-settling promises all end with
 *   `SANDBOX_TIMEOUT`.
 * - One single-use worker is kept booted in the background, so a call does
 *   not pay the ~30 ms worker cold start; each execution still gets a fresh
 *   worker, used once and terminated.
 *
 * NOT a security boundary: worker threads share the host process (memory,
 * file descriptors, process-wide state). Use an isolate or a confined
 * process for untrusted code.
 */
export class WorkerEngine implements SandboxEngine, AsyncDisposable {
  /** Engine name. */
  readonly name = "worker" as const;
  /** What this engine guarantees, as data. */
  readonly capabilities: EngineCapabilities = CAPABILITIES;
  /** The limits used when a call passes no override. */
  readonly limits: Readonly<EngineLimits>;

  private readonly modules = new Map<string, WireModule>();
  private readonly running = new Set<Execution>();
  private readonly exiting = new Set<Promise<unknown>>();
  private spare: WorkerHandle | undefined;
  private refill: NodeJS.Immediate | undefined;
  private disposed: Promise<void> | undefined;

  /** @throws SandboxError `SANDBOX_INVALID_CONFIG` when an option is out of range. */
  constructor(options: WorkerEngineOptions = {}) {
    const { timeout, memoryLimit, maxOutputSize } = parseSandboxConfig(
      Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)),
    );
    this.limits = Object.freeze({ timeout, memoryLimit, maxOutputSize });
    this.scheduleRefill();
  }

  /**
   * Run `code` (a script; its completion value is the result, awaited when it
   * is a promise; top-level `await` is supported through `toGuestScript`) in a
   * fresh worker. Never rejects: every failure resolves
   * `success: false` with `error` and `errorCode`.
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    const startedAt = performance.now();
    const failNow = (code: SandboxCode, message: string): SandboxResult => ({
      success: false,
      error: new SandboxError(code, message).message,
      errorCode: code,
      duration: performance.now() - startedAt,
      logs: [],
    });
    if (this.disposed !== undefined) {
      return failNow(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "WorkerEngine.execute: the engine was destroyed; create a new WorkerEngine to run more code",
      );
    }
    let resolved: ResolvedOptions;
    try {
      resolved = this.resolveOptions(options);
    } catch (error) {
      return failNow(SANDBOX_CODES.INVALID_OPTIONS, (error as Error).message);
    }
    if (typeof code !== "string") {
      return failNow(
        SANDBOX_CODES.INVALID_OPTIONS,
        `WorkerEngine.execute: code must be a string (got ${typeof code})`,
      );
    }
    const copied = copyContext(context);
    if (typeof copied === "string") return failNow(SANDBOX_CODES.INVALID_OPTIONS, copied);

    let handle: WorkerHandle;
    try {
      handle = this.takeWorker(resolved.memoryLimit);
    } catch (error) {
      return failNow(
        SANDBOX_CODES.WORKER_FAILED,
        `WorkerEngine: could not start a worker thread: ${errorText(error)}`,
      );
    }
    const request: RunRequest = {
      type: "run",
      code: toGuestScript(code).source,
      context: copied,
      modules: [...this.modules.values()],
      maxOutputSize: resolved.maxOutputSize,
    };
    return new Promise<SandboxResult>((resolve) => {
      const execution: Execution = new Execution(handle, resolved, startedAt, (result) => {
        this.retire(handle);
        this.running.delete(execution);
        resolve(result);
      });
      this.running.add(execution);
      execution.start(request);
    });
  }

  /**
   * Make a module available to later executions as a global named `name`:
   * `exports` is plain data (copied now), `source` is guest JavaScript that
   * assigns `module.exports`, evaluated inside the sandbox (wins over `exports`).
   * @throws SandboxError `SANDBOX_INVALID_MODULE` for a bad shape or uncopyable exports.
   */
  registerModule(module: SandboxModule): void {
    if (this.disposed !== undefined) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "WorkerEngine.registerModule: the engine was destroyed; create a new WorkerEngine",
      );
    }
    const parsed = parseSandboxModule(module);
    if (parsed.source !== undefined) {
      this.modules.set(parsed.name, { name: parsed.name, source: parsed.source });
      return;
    }
    let exports: unknown;
    try {
      exports = structuredClone(parsed.exports);
    } catch (error) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_MODULE,
        `Invalid module: module.exports of "${parsed.name}" must be plain data that can be copied (${cloneProblem(parsed.exports, error)})`,
        { cause: error, details: { module: parsed.name } },
      );
    }
    this.modules.set(parsed.name, { name: parsed.name, exports });
  }

  /** Remove a registered module; true when it was registered. */
  unregisterModule(name: string): boolean {
    return this.modules.delete(name);
  }

  /** Drop every registered module. Workers hold no state between executions, so nothing else is kept. */
  reset(): void {
    this.modules.clear();
  }

  /**
   * Terminate the spare worker and every running one (their executions
   * resolve `SANDBOX_ENGINE_DISPOSED`) and wait until all have exited.
   * Idempotent: later calls return the same promise.
   */
  destroy(): Promise<void> {
    this.disposed ??= this.shutdown();
    return this.disposed;
  }

  /** Same as {@link WorkerEngine.destroy}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private async shutdown(): Promise<void> {
    if (this.refill !== undefined) clearImmediate(this.refill);
    this.refill = undefined;
    for (const execution of [...this.running]) {
      execution.finish({
        success: false,
        error: new SandboxError(
          SANDBOX_CODES.ENGINE_DISPOSED,
          "WorkerEngine: the engine was destroyed while this execution was running",
        ).message,
        errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      });
    }
    if (this.spare !== undefined) this.retire(this.spare);
    this.spare = undefined;
    while (this.exiting.size > 0) await Promise.allSettled([...this.exiting]);
  }

  private resolveOptions(options: SandboxOptions | undefined): ResolvedOptions {
    const parsed = parseSandboxOptions(options ?? {});
    return {
      timeout: parsed.timeout ?? this.limits.timeout,
      memoryLimit: parsed.memoryLimit ?? this.limits.memoryLimit,
      maxOutputSize: parsed.maxOutputSize ?? this.limits.maxOutputSize,
      onLog: parsed.onLog,
    };
  }

  /** The booted (or booting) spare when its heap budget matches, else a new worker. */
  private takeWorker(memoryLimit: number): WorkerHandle {
    const spare = this.spare;
    if (spare !== undefined && !spare.exited && spare.memoryLimit === memoryLimit) {
      this.spare = undefined;
      spare.worker.ref();
      this.scheduleRefill();
      return spare;
    }
    const handle = this.spawn(memoryLimit);
    this.scheduleRefill();
    return handle;
  }

  private spawn(memoryLimit: number): WorkerHandle {
    const source = workerEntrySource();
    if (source === undefined) {
      throw new SandboxError(
        SANDBOX_CODES.WORKER_FAILED,
        "the worker entry (worker-entry.cjs) is missing from the package's dist/; run `pnpm build` in @suaveplan/sandbox-worker",
      );
    }
    const worker = new Worker(source, {
      eval: true,
      resourceLimits: resourceLimitsFor(memoryLimit),
      // Lets the guest's import() reject with a guest-realm error (see worker-entry).
      execArgv: ["--experimental-vm-modules"],
      argv: [],
      env: {},
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    const handle: WorkerHandle = { worker, memoryLimit, exited: false, owner: undefined };
    worker.on("message", (message: WorkerMessage) => handle.owner?.onMessage(message));
    worker.on("error", (error) => handle.owner?.onError(error));
    worker.on("exit", (exitCode) => {
      handle.exited = true;
      if (this.spare === handle) this.spare = undefined;
      handle.owner?.onExit(exitCode);
    });
    return handle;
  }

  /** Boot the next spare worker soon, off the current call's path. */
  private scheduleRefill(): void {
    if (this.disposed !== undefined || this.spare !== undefined || this.refill !== undefined) return;
    this.refill = setImmediate(() => {
      this.refill = undefined;
      if (this.disposed !== undefined || this.spare !== undefined) return;
      try {
        const spare = this.spawn(this.limits.memoryLimit);
        spare.worker.unref(); // an idle spare never keeps the host process alive
        this.spare = spare;
      } catch {
        // No spare then; the next call starts its own worker and reports why.
      }
    });
    this.refill.unref();
  }

  /** Terminate a worker and track it until it has exited. */
  private retire(handle: WorkerHandle): void {
    handle.owner = undefined;
    if (handle.exited) return;
    const exited = handle.worker.terminate().catch(() => undefined);
    this.exiting.add(exited);
    void exited.finally(() => this.exiting.delete(exited));
  }
}

/** One execution on one worker: owns its timers and the log collector. */
class Execution {
  private readonly collector: LogCollector;
  private done = false;
  private started = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly handle: WorkerHandle,
    private readonly options: ResolvedOptions,
    private readonly startedAt: number,
    private readonly resolve: (result: SandboxResult) => void,
  ) {
    const onLog = options.onLog;
    this.collector = new LogCollector(
      options.maxOutputSize,
      onLog === undefined
        ? undefined
        : (entry) => {
            try {
              onLog(entry);
            } catch {
              // A throwing onLog must not break the execution; its errors are ignored.
            }
          },
    );
  }

  start(request: RunRequest): void {
    this.handle.owner = this;
    if (this.handle.exited) {
      this.onExit(undefined);
      return;
    }
    this.timer = setTimeout(() => {
      this.finish(
        failure(
          SANDBOX_CODES.WORKER_FAILED,
          `WorkerEngine: the worker did not start within ${WORKER_STARTUP_TIMEOUT_MS} ms; the host may be overloaded`,
        ),
      );
    }, WORKER_STARTUP_TIMEOUT_MS);
    this.handle.worker.postMessage(request);
  }

  onMessage(message: WorkerMessage): void {
    if (this.done) return;
    switch (message.type) {
      case "started": {
        this.started = true;
        clearTimeout(this.timer);
        const { timeout } = this.options;
        this.timer = setTimeout(() => {
          this.finish(
            failure(
              SANDBOX_CODES.TIMEOUT,
              `Execution timed out after ${timeout} ms: the code was still running (a loop, a pending timer or an unsettled promise) and its worker was terminated; raise \`timeout\` or make the code finish sooner`,
            ),
          );
        }, timeout);
        return;
      }
      case "log":
        this.collector.push(LOG_LEVELS[message.level] ?? "log", message.message);
        return;
      case "done":
        if (message.ok) {
          this.finish({ success: true, result: message.value, memoryUsed: message.memoryUsed });
        } else {
          this.finish({ ...failure(codeFor(message.kind), message.error), memoryUsed: message.memoryUsed });
        }
        return;
      default:
        return;
    }
  }

  onError(error: Error): void {
    if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") {
      const limit = this.options.memoryLimit;
      this.finish(
        failure(
          SANDBOX_CODES.MEMORY_EXCEEDED,
          this.started
            ? `Execution exceeded the memory limit of ${limit} bytes (V8 heap) and its worker was terminated; raise \`memoryLimit\` or allocate less`
            : `The worker ran out of memory while starting: memoryLimit ${limit} bytes is too small to boot a worker thread; raise \`memoryLimit\``,
        ),
      );
      return;
    }
    this.finish(
      failure(SANDBOX_CODES.WORKER_FAILED, `WorkerEngine: the worker thread failed: ${errorText(error)}`),
    );
  }

  onExit(exitCode: number | undefined): void {
    this.finish(
      failure(
        SANDBOX_CODES.WORKER_FAILED,
        `WorkerEngine: the worker thread exited${exitCode === undefined ? "" : ` with code ${exitCode}`} before it returned a result`,
      ),
    );
  }

  finish(outcome: Outcome): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.handle.owner = undefined;
    this.resolve({ ...outcome, duration: performance.now() - this.startedAt, logs: this.collector.entries });
  }
}

function failure(code: SandboxCode, message: string): Outcome {
  return { success: false, error: new SandboxError(code, message).message, errorCode: code };
}

function codeFor(kind: FailureKind): SandboxCode {
  switch (kind) {
    case "module":
      return SANDBOX_CODES.INVALID_MODULE;
    case "context":
      return SANDBOX_CODES.INVALID_OPTIONS;
    default:
      return SANDBOX_CODES.ENGINE_FAILED;
  }
}

/** Copy `context` by structured clone, key by key, naming the first key that cannot be copied. */
function copyContext(context: Record<string, unknown> | undefined): Record<string, unknown> | string {
  if (context === undefined || context === null) return {};
  if (typeof context !== "object" || Array.isArray(context)) {
    return `WorkerEngine.execute: context must be a plain object of globals (got ${Array.isArray(context) ? "an array" : typeof context})`;
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(context)) {
    const value = context[key];
    try {
      Object.defineProperty(copy, key, {
        value: structuredClone(value),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    } catch (error) {
      return `WorkerEngine.execute: context.${key} cannot be copied into the sandbox (${cloneProblem(value, error)}); pass plain data`;
    }
  }
  return copy;
}

function cloneProblem(value: unknown, error: unknown): string {
  if (typeof value === "function") return "it is a function";
  if (typeof value === "symbol") return "it is a symbol";
  return error instanceof Error ? `${error.name}: ${error.message.slice(0, 120)}` : "it cannot be cloned";
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
