import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import {
  type EngineCapabilities,
  type EngineLimits,
  failure,
  type SandboxEngine,
  type SandboxModule,
  type SandboxOptions,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import {
  buildExecutionRequest,
  ModuleRegistry,
  toSandboxResult,
  withoutCode,
} from "@suaveplan/sandbox-guest";
import { HOST_SAMPLES_WORKERS, MEMORY_SAMPLE_MS } from "../internal/memory-sampling.js";
import { MIN_WORKER_MEMORY_BYTES } from "../internal/resource-limits.js";
import { WorkerRun } from "../internal/worker-run.js";
import { WorkerSupply } from "../internal/worker-supply.js";
import type { WorkerThread } from "../internal/worker-thread.js";

const offHeap = HOST_SAMPLES_WORKERS ? "sampled" : "yields";

/**
 * What the worker engine guarantees — and what it does not. `memoryAccounting`
 * depends on the Node line: where the host can read a busy worker's memory
 * (`worker.getHeapStatistics()`, node 22.16+ and 24) array buffers and Wasm
 * memory are sampled also during synchronous guest code; on older lines only
 * while the guest yields.
 */
export const WORKER_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: false,
  tier: "worker_threads + node:vm: own V8 heap with resource limits, but the same process — NOT a security boundary",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: true,
  measuresCpu: "entries",
  memoryAccounting: Object.freeze({
    kinds: Object.freeze({
      heap: "allocation",
      strings: "allocation",
      arrayBuffers: offHeap,
      sharedArrayBuffers: "yields",
      wasmMemory: offHeap,
    }),
    sampleIntervalMs: MEMORY_SAMPLE_MS,
    exactness: HOST_SAMPLES_WORKERS
      ? `The V8 heap (strings included) is capped by the worker's resource limits; array buffers and Wasm memory are sampled every ${MEMORY_SAMPLE_MS} ms from the host, also while guest code runs synchronously, so a run can overshoot by what it allocates in ${MEMORY_SAMPLE_MS} ms; shared array buffers are sampled inside the worker only while the guest yields.`
      : `The V8 heap (strings included) is capped by the worker's resource limits; array buffers, shared array buffers and Wasm memory are sampled every ${MEMORY_SAMPLE_MS} ms inside the worker, only while the guest yields (this Node cannot read a busy worker's memory from the host): synchronous guest code can overshoot them until the timeout ends it.`,
  }),
} satisfies EngineCapabilities);

/** Options of {@link WorkerEngine}; defaults come from `SANDBOX_DEFAULTS`. */
export interface WorkerEngineOptions {
  /** Wall-clock limit per execution, in ms (counted from when the booted worker has the code). */
  timeout?: number | undefined;
  /** Memory limit per execution — the worker's V8 heap (`resourceLimits`) and its sampled off-heap memory — and the largest result, in bytes. */
  memoryLimit?: number | undefined;
  /** Cap on captured console output, in bytes. */
  maxOutputSize?: number | undefined;
}

/**
 * How long a worker may take to boot before the execution fails with
 * `SANDBOX_WORKER_FAILED`, in ms. Only a cold start can take this long; the
 * `timeout` budget starts once the booted worker has the request.
 */
export const WORKER_STARTUP_TIMEOUT_MS = 10_000;

/**
 * Runs guest JavaScript in a fresh `node:worker_threads` Worker per
 * execution, inside a `node:vm` context in that worker, on the shared guest
 * runtime (`@suaveplan/sandbox-guest`): the same kernel, codec, console
 * formatting and error codes as every other engine. This package adds only
 * the worker's lifecycle and the `postMessage` transport.
 *
 * - `memoryLimit` (bytes) becomes the worker's V8 `resourceLimits`, and the
 *   worker's off-heap memory (array buffers, shared ones, Wasm memory) is
 *   sampled against it (see `capabilities.memoryAccounting`); exceeding either
 *   ends the run with `SANDBOX_MEMORY_EXCEEDED` while the host carries on.
 * - `timeout` (ms) is enforced by the driver inside the worker (sync loops,
 *   microtask loops, pending timers, never-settling promises) and backed by
 *   `worker.terminate()` on the host.
 * - `options.signal` terminates the worker at once (`SANDBOX_CANCELLED`),
 *   also while synchronous guest code runs (`abortsRunningCode`).
 * - One single-use worker is kept booted in the background, so a call does
 *   not pay the worker's cold start; each execution still gets a fresh
 *   worker, used once and terminated.
 *
 * NOT a security boundary: worker threads share the host process (memory,
 * file descriptors, process-wide state). Use an isolate or a confined
 * process for hostile code.
 *
 * @example
 * const engine = new WorkerEngine({ timeout: 1000, memoryLimit: 64 * 1024 * 1024 });
 * const { result } = await engine.execute("2 + 3"); // 5
 * await engine.destroy();
 */
export class WorkerEngine implements SandboxEngine, AsyncDisposable {
  /** Always `"worker"`. */
  readonly name = "worker" as const;
  /** See {@link WORKER_CAPABILITIES}. */
  readonly capabilities: EngineCapabilities = WORKER_CAPABILITIES;
  /** The limits every execution starts from (per-execution options override them). */
  readonly limits: Readonly<EngineLimits>;
  private readonly modules = new ModuleRegistry();
  private readonly supply: WorkerSupply;
  private readonly running = new Set<WorkerRun>();
  private disposed: Promise<void> | undefined;

  /**
   * @param options - `timeout` (ms, default 5000), `memoryLimit` (bytes,
   * default 128 MiB; the worker's heap limit and the largest result),
   * `maxOutputSize` (bytes, default 1 MiB).
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when a limit is not a positive integer.
   */
  constructor(options: WorkerEngineOptions = {}) {
    this.limits = parseEngineLimits(options);
    this.supply = new WorkerSupply(this.limits.memoryLimit);
  }

  /**
   * Run `code` in a fresh worker. Resolves a result for every failure — the
   * guest's (`SANDBOX_GUEST_ERROR`, `SANDBOX_SYNTAX_ERROR`,
   * `SANDBOX_RESULT_NOT_TRANSFERABLE`, `SANDBOX_TIMEOUT`,
   * `SANDBOX_MEMORY_EXCEEDED`), bad input (`SANDBOX_INVALID_OPTIONS`,
   * `SANDBOX_CODE_BLOCKED`), a worker that could not start or died
   * (`SANDBOX_WORKER_FAILED`), `options.signal` (`SANDBOX_CANCELLED`: an
   * abort terminates the worker at once, even in synchronous code; the logs
   * streamed so far are kept) and use after {@link destroy}
   * (`SANDBOX_ENGINE_DISPOSED`). `options.hostCalls` answers the guest's
   * `tools.<name>(input)` calls on the host, across the thread boundary.
   * `result.usage` carries `cpuMs`, the time the guest's code ran in its realm.
   * Never rejects.
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    const startedAt = performance.now();
    if (this.disposed !== undefined) {
      return failure(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "WorkerEngine was destroyed; create a new WorkerEngine to run code",
      );
    }
    const built = buildExecutionRequest(code, context, options, this.limits, this.modules);
    if (!built.ok) return built.result;
    const { signal } = built;
    if (signal?.aborted === true) {
      return failure(SANDBOX_CODES.CANCELLED, "Execution was cancelled before it started");
    }
    if (built.memoryLimit < MIN_WORKER_MEMORY_BYTES) {
      return failure(
        SANDBOX_CODES.MEMORY_EXCEEDED,
        `Execution exceeded its memory limit of ${built.memoryLimit} bytes: a worker needs at least ${MIN_WORKER_MEMORY_BYTES} bytes (12 MiB) to start, so none was started`,
        { duration: performance.now() - startedAt },
      );
    }
    let thread: WorkerThread;
    try {
      thread = this.supply.take(built.memoryLimit);
    } catch (error) {
      return failure(
        SANDBOX_CODES.WORKER_FAILED,
        `WorkerEngine could not start a worker thread: ${withoutCode(error)}`,
        { duration: performance.now() - startedAt },
      );
    }
    const run = new WorkerRun(
      thread,
      built.request,
      built.onLog,
      // A worker that reported is done; terminating it takes the host thread ~1.5 ms while the
      // worker winds down, so it happens after the result is delivered. Others stop at once.
      (ended, reported) => this.supply.retire(ended, reported),
      WORKER_STARTUP_TIMEOUT_MS,
      built.hostCalls,
    );
    this.running.add(run);
    // Synchronous guest code runs on the worker's own thread: an abort terminates the worker at once.
    const onAbort = () => run.abort({ kind: "cancelled" });
    signal?.addEventListener("abort", onAbort, { once: true });
    const ended = await run.result;
    signal?.removeEventListener("abort", onAbort);
    this.running.delete(run);
    this.supply.refillSoon();
    return toSandboxResult(ended.outcome, {
      duration: performance.now() - startedAt,
      logs: ended.logs,
      memoryUsed: ended.memoryUsed,
      cpuMs: ended.cpuMs,
      toolCalls: ended.toolCalls,
      toolBytes: ended.toolBytes,
      faultCode: SANDBOX_CODES.WORKER_FAILED,
    });
  }

  /**
   * Make a module available to later executions as a global named
   * `module.name`: `exports` (plain data, copied in by the codec) or `source`
   * (guest JavaScript assigning `module.exports`, evaluated inside each
   * execution; wins over `exports` when both are given). Replaces a module of the same name.
   * @throws SandboxError `SANDBOX_INVALID_MODULE` (bad name, exports that cannot
   * cross, source that does not compile) or `SANDBOX_ENGINE_DISPOSED`.
   */
  registerModule(module: SandboxModule): void {
    if (this.disposed !== undefined) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "WorkerEngine.registerModule: the engine was destroyed; create a new WorkerEngine",
      );
    }
    this.modules.register(module);
  }

  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean {
    return this.modules.unregister(name);
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

  /** Same as {@link destroy}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private async shutdown(): Promise<void> {
    for (const run of [...this.running]) {
      run.abort({ kind: "disposed", message: "WorkerEngine was destroyed while the code ran" });
    }
    this.modules.clear();
    await this.supply.close();
  }
}
