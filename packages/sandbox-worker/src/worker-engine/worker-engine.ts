import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { parseMaxSpares } from "@suaveplan/sandbox-core/spares";
import { type EngineCapabilities, failure, type SandboxResult } from "@suaveplan/sandbox-core/types";
import {
  HOST_SAMPLES_WORKERS,
  MEMORY_SAMPLE_MS,
  RESIDENT_ALLOWANCE_BYTES,
} from "@suaveplan/sandbox-core/worker-memory";
import {
  type EngineRun,
  EngineShell,
  type ReadyRequest,
  toSandboxResult,
  withoutCode,
} from "@suaveplan/sandbox-guest";
import { MIN_WORKER_MEMORY_BYTES } from "../internal/resource-limits.js";
import { parseReuseOption, type ReuseOption } from "../internal/reuse-option.js";
import { type ReuseSettings, WorkerPool } from "../internal/worker-pool.js";
import { WorkerRun } from "../internal/worker-run.js";
import { WorkerSupply } from "../internal/worker-supply.js";
import type { WorkerThread } from "../internal/worker-thread.js";

const offHeap = HOST_SAMPLES_WORKERS ? "sampled" : "yields";
/** What `exactness` says on every Node line: the parts capped at allocation… */
const CAPPED =
  "The V8 heap (strings included) is capped by the worker's resource limits and Wasm memory in the realm (refused at allocation)";
/** …the resident-memory valve (see `watchWorkerMemory`) and the last sample. */
const BEHIND = `Behind that, the host reads the process's resident memory every ${MEMORY_SAMPLE_MS} ms and ends a run whose worker has not yielded for three readings in a row once the process grew, since the run began, by more than every running run's limit plus ${RESIDENT_ALLOWANCE_BYTES / 1024 / 1024} MiB each: a guest that does not yield can overshoot by that much (and what it touches in ${3 * MEMORY_SAMPLE_MS} ms), and memory the application takes meanwhile counts too. One last sample as the run ends fails a run that still holds more than the limit.`;
/** …and in between, what depends on the line. */
const SAMPLED = HOST_SAMPLES_WORKERS
  ? `array buffers are sampled every ${MEMORY_SAMPLE_MS} ms from the host, also while guest code runs synchronously, so a run can overshoot by what it allocates in ${MEMORY_SAMPLE_MS} ms; shared array buffers are sampled inside the worker only while the guest yields.`
  : `array buffers and shared array buffers are sampled every ${MEMORY_SAMPLE_MS} ms inside the worker, only while the guest yields (this Node cannot read a busy worker's memory from the host).`;

/**
 * What the worker engine guarantees — and what it does not. `memoryAccounting`
 * depends on the Node line: where the host can read a busy worker's memory
 * (`worker.getHeapStatistics()`, node 22.16+ and 24) array buffers are
 * sampled also during synchronous guest code; on older lines only while the
 * guest yields. On every line the process's resident memory is a coarser
 * valve behind both, and Wasm memory is capped in the realm.
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
      wasmMemory: "allocation",
    }),
    sampleIntervalMs: MEMORY_SAMPLE_MS,
    exactness: `${CAPPED}; ${SAMPLED} ${BEHIND}`,
  }),
} satisfies EngineCapabilities);

/** {@link WORKER_CAPABILITIES} of an engine with the reuse tier on: the same limits, a weaker tier. */
export function reuseCapabilities(reuse: ReuseSettings): EngineCapabilities {
  return Object.freeze({
    ...WORKER_CAPABILITIES,
    tier: `worker_threads + node:vm, reused workers: each run in a fresh node:vm context, but up to ${reuse.workers} long-lived workers each serve up to ${reuse.runsPerWorker} runs in turn with one V8 heap — NOT a security boundary; code that escapes node:vm could see the later runs on its worker`,
  } satisfies EngineCapabilities);
}

/** Options of {@link WorkerEngine}; defaults come from `SANDBOX_DEFAULTS`. */
export interface WorkerEngineOptions {
  /** Wall-clock limit per execution, in ms (counted from when the booted worker has the code). */
  timeout?: number | undefined;
  /** Memory limit per execution — the worker's V8 heap (`resourceLimits`) and its sampled off-heap memory — and the largest result, in bytes. */
  memoryLimit?: number | undefined;
  /** Cap on captured console output, in bytes. */
  maxOutputSize?: number | undefined;
  /**
   * The reuse tier, for servers (default off: a fresh worker per run). With
   * `true` or `{ workers, runsPerWorker }`, up to `workers` long-lived workers
   * (default: the machine's parallelism, at most 4) each serve runs one at a
   * time, every run in a fresh `node:vm` context inside the worker, and are
   * replaced after `runsPerWorker` runs (default 1000) or after any run that
   * did not end by the guest's own value, throw or syntax error (timeout,
   * memory, cancel, a worker that died). The memory limit, the timeout and
   * crash isolation stay; fresh globals per run stay; what is shared is the
   * worker's heap and thread, so code that escapes `node:vm` could observe the
   * later runs on its worker. A call while all are busy waits for one. Runs
   * with a per-call `memoryLimit` other than the engine's get a single-use worker.
   */
  reuse?: ReuseOption | undefined;
  /**
   * Booted spare workers kept ready at most (default 4; 0 for none). How
   * many are kept follows demand: as many as the most runs in flight at once
   * over the last 5–10 s, at least one. Each spare is an idle worker thread
   * (about 10 MB). Not used with `reuse`, whose workers stay warm themselves.
   */
  maxSpares?: number | undefined;
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
export class WorkerEngine extends EngineShell {
  /** Always `"worker"`. */
  readonly name = "worker" as const;
  /** See {@link WORKER_CAPABILITIES} (and {@link reuseCapabilities} with `reuse`). */
  readonly capabilities: EngineCapabilities;
  private readonly supply: WorkerSupply;
  /** The reuse tier's workers, when `reuse` is on. */
  private readonly pool: WorkerPool | undefined;

  /**
   * @param options - `timeout` (ms, default 5000), `memoryLimit` (bytes,
   * default 128 MiB; the worker's heap limit and the largest result),
   * `maxOutputSize` (bytes, default 1 MiB), `reuse` (default off).
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when a limit is not a positive integer or `reuse` is malformed.
   */
  constructor(options: WorkerEngineOptions = {}) {
    super("WorkerEngine", parseEngineLimits(options));
    const reuse = parseReuseOption(options.reuse);
    const maxSpares = parseMaxSpares(options.maxSpares, "WorkerEngine");
    this.supply = new WorkerSupply(this.limits.memoryLimit, reuse === undefined ? maxSpares : 0);
    this.capabilities = reuse === undefined ? WORKER_CAPABILITIES : reuseCapabilities(reuse);
    if (reuse !== undefined && this.limits.memoryLimit >= MIN_WORKER_MEMORY_BYTES) {
      this.pool = new WorkerPool(
        this.limits.memoryLimit,
        reuse,
        (memoryLimit, onExit, warmUp) => this.supply.start(memoryLimit, onExit, warmUp),
        (thread, later) => this.supply.retire(thread, later),
      );
      this.pool.warm();
    }
  }

  /**
   * Run one request in a fresh worker (or a reused one). Results beyond the
   * guest's own: `SANDBOX_MEMORY_EXCEEDED` (also for a limit too small for a
   * worker to start), `SANDBOX_WORKER_FAILED` (a worker that could not start
   * or died). An abort terminates the worker at once, even in synchronous
   * code; the logs streamed so far are kept. `result.usage.cpuMs` is the
   * time the guest's code ran in its realm.
   */
  protected async start(built: ReadyRequest, startedAt: number): Promise<EngineRun | SandboxResult> {
    const { signal } = built;
    if (built.memoryLimit < MIN_WORKER_MEMORY_BYTES) {
      return failure(
        SANDBOX_CODES.MEMORY_EXCEEDED,
        `Execution exceeded its memory limit of ${built.memoryLimit} bytes: a worker needs at least ${MIN_WORKER_MEMORY_BYTES} bytes (12 MiB) to start, so none was started`,
        { duration: performance.now() - startedAt },
      );
    }
    const pool = this.pool;
    let thread: WorkerThread | undefined;
    /** The thread came from the supply (single-use): its demand count ends with the run. */
    let fromSupply = false;
    let run: WorkerRun;
    try {
      if (pool !== undefined && built.memoryLimit === pool.memoryLimit) {
        thread = await pool.acquire(signal);
        // Either may have happened while it waited in line.
        if (this.destroyed || aborted(signal)) {
          if (thread !== undefined) pool.putBack(thread);
          return this.destroyed
            ? failure(
                SANDBOX_CODES.ENGINE_DISPOSED,
                "WorkerEngine was destroyed while the execution waited for a worker",
                { duration: performance.now() - startedAt },
              )
            : failure(SANDBOX_CODES.CANCELLED, "Execution was cancelled while it waited for a worker", {
                duration: performance.now() - startedAt,
              });
        }
      }
      // Without the reuse tier, for another heap budget, or when the pool could not start one.
      const reused = thread !== undefined;
      if (thread === undefined) {
        thread = this.supply.take(built.memoryLimit);
        fromSupply = true;
      }
      run = new WorkerRun(
        thread,
        built.request,
        built.onLog,
        reused && pool !== undefined
          ? (ended, reported, outcome) => pool.release(ended, reported, outcome)
          : // A worker that reported is done; terminating it takes the host thread ~1.5 ms while
            // the worker winds down, so it happens after the result is delivered. Others stop at once.
            (ended, reported) => this.supply.retire(ended, reported),
        WORKER_STARTUP_TIMEOUT_MS,
        built.hostCalls,
        reused,
      );
    } catch (error) {
      if (fromSupply) this.supply.finished();
      return failure(
        SANDBOX_CODES.WORKER_FAILED,
        `WorkerEngine could not start a worker thread: ${withoutCode(error)}`,
        { duration: performance.now() - startedAt },
      );
    }
    return {
      abort: (outcome) => run.abort(outcome),
      result: run.result.then((ended) => {
        if (fromSupply) this.supply.finished();
        return toSandboxResult(ended.outcome, {
          duration: performance.now() - startedAt,
          logs: ended.logs,
          memoryUsed: ended.memoryUsed,
          cpuMs: ended.cpuMs,
          toolCalls: ended.toolCalls,
          toolBytes: ended.toolBytes,
          faultCode: SANDBOX_CODES.WORKER_FAILED,
        });
      }),
    };
  }

  /** Terminate the spare workers and the reuse tier's, and wait until all have exited. */
  protected async dispose(): Promise<void> {
    this.pool?.close();
    await this.supply.close();
  }
}

/** Whether `signal` is aborted (a call, so a check after an `await` is not narrowed away). */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
