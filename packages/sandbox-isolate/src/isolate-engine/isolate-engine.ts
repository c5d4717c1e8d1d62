import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { memoryLimitBelowMinimum, parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import {
  type EngineCapabilities,
  type EngineLimits,
  failure,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import {
  answerCall,
  type EngineRun,
  EngineShell,
  type ReadyRequest,
  toSandboxResult,
  withoutCode,
} from "@suaveplan/sandbox-guest";
import { HelperGroup } from "../internal/helper-group.js";
import { findHelperEntry } from "../internal/isolate-helper.js";
import { IsolatePool } from "../internal/isolate-pool.js";
import { type IsolateRun, startIsolateRun } from "../internal/isolate-run.js";
import type { IsolateFactory, IsolateHeapStatistics } from "../isolate-factory/isolate-factory.js";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";
import { isNodeSnapshotDisabled, needsNoNodeSnapshot } from "../node-snapshot/node-snapshot.js";

/** isolated-vm refuses heap limits below this, in MiB. */
const MIN_MEMORY_LIMIT_MIB = 8;
const MIB = 1024 * 1024;

/** What to do when Node runs without `--no-node-snapshot` (see the README). */
export type NodeSnapshotPolicy = "error" | "ignore";

/**
 * Where the isolates run:
 * - `"helper"` (the default): in helper child processes started with `node
 *   --no-node-snapshot`. A fatal V8 error (such as an out-of-memory abort the
 *   heap limit did not catch) ends a helper and fails the executions it held
 *   (`SANDBOX_ENGINE_CRASHED`), not the application.
 * - `"in-process"`: in this process (needs `node --no-node-snapshot` on Node
 *   20+). Faster to start and without the message round trip, but a fatal V8
 *   error in an isolate aborts the whole application.
 * - `"auto"`: the previous default, kept with its meaning — in-process when
 *   the flag is present (or not needed), in helpers otherwise.
 */
export type IsolateProcessOption = "auto" | "in-process" | "helper";

/** Constructor options of {@link IsolateEngine}; every field is optional. */
export interface IsolateEngineOptions extends Partial<EngineLimits> {
  /** Creates isolates. Default: {@link createIsolatedVmFactory} (the real isolated-vm 5.x). */
  factory?: IsolateFactory;
  /** Healthy idle isolates kept warm between executions. Default 1. */
  maxIdleIsolates?: number;
  /** Timers one execution may have pending at once; it may create 100 times as many in total. Default 1000. */
  maxTimers?: number;
  /** Console lines per execution, on top of the `maxOutputSize` byte cap; later lines are dropped. Default 10000. */
  maxLogLines?: number;
  /**
   * Where the isolates run (see {@link IsolateProcessOption}). Default
   * `"helper"`, which keeps a V8 or isolated-vm crash out of this process at
   * the cost of a message round trip per execution; `"in-process"` when a
   * `factory` is given (a factory only runs in-process).
   */
  process?: IsolateProcessOption;
  /**
   * Helper processes the engine may run at once (helper mode). Each execution
   * goes to the least loaded helper; a second one is started when executions
   * overlap. A helper that crashes fails only the executions it held.
   * Default 2.
   */
  helpers?: number;
  /**
   * On Node 20+ without `--no-node-snapshot`, isolated-vm can crash the whole
   * process if it runs in it. `"error"` (default): never run isolates in such
   * a process (`"auto"` then uses a helper; `"in-process"` throws at
   * construction). `"ignore"`: run them in-process anyway, at your own risk.
   */
  nodeSnapshot?: NodeSnapshotPolicy;
}

/** What the isolate engine guarantees with `process: "in-process"`. */
export const ISOLATE_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: true,
  tier: "V8 isolate (isolated-vm) in this process: a security boundary — separate heap with a memory limit (array buffers counted, Wasm memory capped), no host objects reachable; a fatal V8 error (e.g. an out-of-memory abort the heap limit did not catch) ends the application",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: true,
  measuresCpu: "isolate",
  memoryAccounting: Object.freeze({
    kinds: Object.freeze({
      heap: "allocation",
      strings: "allocation",
      arrayBuffers: "allocation",
      sharedArrayBuffers: "allocation",
      wasmMemory: "allocation",
    }),
    exactness:
      "Every allocation is checked when it is made: the V8 heap (strings included) by the isolate's heap limit (isolated-vm notes it can reach 2–3 × before the isolate is stopped), array buffers and shared ones by isolated-vm's allocator against the heap in use plus the buffers held, and the run's Wasm memories together at memoryLimit, each reserving its maximum when it is made (Wasm pages are not counted with the heap, so heap and Wasm memory can each reach the limit).",
  }),
} satisfies EngineCapabilities);

/** What the isolate engine guarantees in helper mode (the default): the same, in separate processes. */
export const ISOLATE_HELPER_CAPABILITIES: EngineCapabilities = Object.freeze({
  ...ISOLATE_CAPABILITIES,
  tier: "V8 isolate (isolated-vm) in a helper process: a security boundary — separate heap with a memory limit (array buffers counted, Wasm memory capped), no host objects reachable; a fatal V8 error ends the helper and fails the executions it held (SANDBOX_ENGINE_CRASHED), not the application; the helper is not confined by the OS",
});

/**
 * Runs JavaScript in a V8 isolate through isolated-vm — the one engine that is
 * a security boundary on its own — on the shared guest runtime
 * (`@suaveplan/sandbox-guest`): the same kernel, codec, console formatting
 * and error codes as every other engine. This package adds the isolates'
 * lifecycle and the isolated-vm transport.
 *
 * A warm isolate is reused and every execution gets a fresh context in it;
 * concurrent executions lease their own isolates. Values cross as codec text
 * only; console lines stream to `options.onLog`; timers are host timers the
 * driver cancels when the execution ends. The timeout bounds sync loops,
 * microtask loops, promises and timers; exceeding `memoryLimit` disposes the
 * isolate (`SANDBOX_MEMORY_EXCEEDED`) and the next execution gets a new one.
 *
 * By default the isolates run in helper child processes (up to `helpers`,
 * default 2), behind the same API, so a fatal V8 error costs the executions
 * of one helper rather than the application; `process: "in-process"` runs
 * them in this process. See {@link IsolateProcessOption} and the README's
 * "Helper process".
 *
 * @example
 * await using engine = new IsolateEngine({ timeout: 1000 });
 * const { result } = await engine.execute("2 + 3"); // 5
 */
export class IsolateEngine extends EngineShell {
  /** Always `"isolate"`. */
  readonly name = "isolate" as const;
  /** {@link ISOLATE_HELPER_CAPABILITIES} in helper mode (the default), {@link ISOLATE_CAPABILITIES} in-process. */
  readonly capabilities: EngineCapabilities;
  /** Where this engine's isolates run, as resolved from the `process` option. */
  readonly processMode: "in-process" | "helper";
  private readonly local: { pool: IsolatePool } | undefined;
  private readonly helper: HelperGroup | undefined;

  /**
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when an option is invalid;
   * `SANDBOX_ENGINE_UNAVAILABLE` when isolates must run in-process and Node
   * lacks `--no-node-snapshot`, or helper mode finds no built helper entry.
   */
  constructor(options: IsolateEngineOptions = {}) {
    const limits = parseEngineLimits(options);
    const tooSmall = memoryLimitProblem(limits.memoryLimit, "memoryLimit");
    if (tooSmall !== undefined) throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, tooSmall);
    super("IsolateEngine", {
      ...limits,
      maxTimers: nonNegativeInteger(options.maxTimers, 1000, "maxTimers"),
      maxLogLines: nonNegativeInteger(options.maxLogLines, 10_000, "maxLogLines"),
    });
    const maxIdle = nonNegativeInteger(options.maxIdleIsolates, 1, "maxIdleIsolates");
    const helpers = positiveInteger(options.helpers, 2, "helpers");
    this.processMode = resolveProcessMode(options);
    if (this.processMode === "helper") {
      this.capabilities = ISOLATE_HELPER_CAPABILITIES;
      this.helper = new HelperGroup(helperEntry(), maxIdle, helpers);
    } else {
      this.capabilities = ISOLATE_CAPABILITIES;
      const factory = options.factory ?? createIsolatedVmFactory();
      this.local = { pool: new IsolatePool(factory, maxIdle) };
    }
  }

  /**
   * Run one request in a fresh context. Results beyond the guest's own:
   * `SANDBOX_MEMORY_EXCEEDED`, an unusable isolated-vm
   * (`SANDBOX_ENGINE_UNAVAILABLE`), a helper process that died while the
   * code ran (`SANDBOX_ENGINE_CRASHED`, for every execution it held; the
   * next execution starts a new one), a helper that could not be started
   * (`SANDBOX_ENGINE_FAILED`). The code runs on isolated-vm's thread: an
   * abort stops it at once (the isolate is disposed if it is busy).
   */
  protected start({ request, memoryLimit, onLog, hostCalls }: ReadyRequest): EngineRun | SandboxResult {
    const tooSmall = memoryLimitProblem(memoryLimit, "options.memoryLimit");
    if (tooSmall !== undefined) return failure(SANDBOX_CODES.INVALID_OPTIONS, tooSmall);
    const memoryLimitMiB = toMiB(memoryLimit);
    if (this.helper !== undefined) {
      const run = this.helper.run(request, memoryLimitMiB, { onLog, hostCalls });
      return { abort: (outcome) => run.abort(outcome), result: run.result };
    }
    const { pool } = this.local as { pool: IsolatePool };
    let run: IsolateRun;
    try {
      run = startIsolateRun(pool, request, memoryLimitMiB, {
        onLog,
        onCall:
          hostCalls === undefined
            ? undefined
            : (call) => {
                void answerCall(call, hostCalls).then((reply) => run.driver.reply(reply));
                return undefined;
              },
      });
    } catch (error) {
      const errorCode = error instanceof SandboxError ? error.code : SANDBOX_CODES.ENGINE_FAILED;
      return failure(errorCode, withoutCode(error));
    }
    return {
      abort: (outcome) => run.driver.abort(outcome),
      result: run.ended.then((ended) => toSandboxResult(ended.outcome, ended)),
    };
  }

  /** Drop registered modules and dispose the warm isolates (running executions finish normally). */
  override reset(): void {
    super.reset();
    this.local?.pool.clearIdle();
    this.helper?.reset();
  }

  /**
   * Heap statistics (bytes) of the warm isolate, creating it when none is
   * warm; `null` after {@link destroy}. In-process mode only: a helper's
   * isolates live in another process (use `result.usage.heapBytes`).
   *
   * @throws SandboxError `SANDBOX_ENGINE_UNAVAILABLE` when no isolate can be
   * created, or in helper mode.
   */
  getHeapStatistics(): IsolateHeapStatistics | null {
    if (this.destroyed) return null;
    if (this.local === undefined) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_UNAVAILABLE,
        'IsolateEngine.getHeapStatistics() reads isolates in this process, and this engine runs them in helper processes; read each result\'s usage.heapBytes instead, or run the isolates in-process (pass { process: "in-process" } and start Node with --no-node-snapshot)',
      );
    }
    return { ...this.local.pool.warm(toMiB(this.limits.memoryLimit)).isolate.getHeapStatisticsSync() };
  }

  /** The first running helper process's id (helper mode), else `undefined`. */
  get helperPid(): number | undefined {
    return this.helper?.pids[0];
  }

  /** The ids of the running helper processes (helper mode; empty in-process or before the first execution). */
  get helperPids(): number[] {
    return this.helper?.pids ?? [];
  }

  /** Dispose every isolate; in helper mode, kill the helpers and wait until they exited. */
  protected async dispose(): Promise<void> {
    this.local?.pool.close();
    await this.helper?.close();
  }
}

/** Where isolates run for these options; throws a configuration that cannot work, with its fix. */
function resolveProcessMode(options: IsolateEngineOptions): "in-process" | "helper" {
  const nodeSnapshot = options.nodeSnapshot ?? "error";
  if (nodeSnapshot !== "error" && nodeSnapshot !== "ignore") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid IsolateEngine option nodeSnapshot: expected "error" or "ignore" (got ${JSON.stringify(nodeSnapshot)})`,
    );
  }
  // A factory only runs in-process; without one, isolates run in helpers unless told otherwise.
  const mode = options.process ?? (options.factory === undefined ? "helper" : "in-process");
  if (mode !== "auto" && mode !== "in-process" && mode !== "helper") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid IsolateEngine option process: expected "auto", "in-process" or "helper" (got ${JSON.stringify(mode)})`,
    );
  }
  if (mode === "helper") {
    if (options.factory !== undefined) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        'Invalid IsolateEngine options: a factory cannot be used with process: "helper" (the helper process creates its isolates with isolated-vm itself); drop factory, or use process: "in-process"',
      );
    }
    return "helper";
  }
  const safeHere = !needsNoNodeSnapshot() || isNodeSnapshotDisabled() || nodeSnapshot === "ignore";
  if (safeHere) return "in-process";
  if (mode === "auto" && options.factory === undefined) return "helper";
  // "auto" with a factory, or "in-process", where isolates must not run.
  const why =
    mode === "in-process"
      ? 'process: "in-process" was asked for'
      : "a factory was given, and a factory only runs in-process";
  throw new SandboxError(
    SANDBOX_CODES.ENGINE_UNAVAILABLE,
    `IsolateEngine cannot run isolates in this process: Node ${process.versions.node} runs with its startup snapshot, and isolated-vm requires \`node --no-node-snapshot\` on Node 20+ (without it V8's shared heap can crash the whole process), but ${why}. Start Node with --no-node-snapshot (test runners: pass it in the worker execArgv; NODE_OPTIONS also works), or let the engine use its helper processes (process: "helper", the default, with no factory), or pass { nodeSnapshot: "ignore" } to accept the risk`,
  );
}

function helperEntry(): string {
  const entry = findHelperEntry();
  if (entry === undefined) {
    throw new SandboxError(
      SANDBOX_CODES.ENGINE_UNAVAILABLE,
      "IsolateEngine cannot start its helper process: the built helper entry isolate-helper.js is missing from @suaveplan/sandbox-isolate; build the package (pnpm build) or reinstall it",
    );
  }
  return entry;
}

/** isolated-vm takes whole MiB: a limit is rounded up (never down, so a run never gets less than asked). */
function toMiB(bytes: number): number {
  return Math.ceil(bytes / MIB);
}

function memoryLimitProblem(bytes: number, field: string): string | undefined {
  return memoryLimitBelowMinimum(bytes, field, "isolate", MIN_MEMORY_LIMIT_MIB);
}

function nonNegativeInteger(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid IsolateEngine option ${field}: expected a non-negative integer (got ${String(value)})`,
    );
  }
  return value;
}

function positiveInteger(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid IsolateEngine option ${field}: expected a positive integer (got ${String(value)})`,
    );
  }
  return value;
}
