import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { toGuestScript } from "@suaveplan/sandbox-core/guest-script";
import { parseSandboxConfig, parseSandboxModule, parseSandboxOptions } from "@suaveplan/sandbox-core/schemas";
import type {
  EngineCapabilities,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { Execution } from "../internal/execution.js";
import type { GuestModule, GuestPayload } from "../internal/guest-bootstrap.js";
import { IsolateSlot } from "../internal/isolate-slot.js";
import type { IsolateFactory, IsolateHeapStatistics } from "../isolate-factory/isolate-factory.js";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";
import { isNodeSnapshotDisabled, needsNoNodeSnapshot } from "../node-snapshot/node-snapshot.js";

/** isolated-vm refuses heap limits below this, in MiB. */
const MIN_MEMORY_LIMIT_MIB = 8;
const MIB = 1024 * 1024;
const MAY_NEED_WRAPPING = /await|return/;
/** Total timer creations allowed per execution, per allowed pending timer. */
const TIMER_CREATIONS_PER_PENDING = 100;

/** What to do when Node runs without `--no-node-snapshot` (see the README). */
export type NodeSnapshotPolicy = "error" | "ignore";

/** Constructor options of {@link IsolateEngine}. */
export interface IsolateEngineOptions {
  /** Wall-clock limit per execution, in ms (sync code, promises and timers together). Default 5000. */
  timeout?: number;
  /** Heap limit per isolate, in bytes; rounded up to whole MiB, at least 8 MiB. Default 128 MiB. */
  memoryLimit?: number;
  /** Console output cap per execution, in UTF-8 bytes. Default 1 MiB. */
  maxOutputSize?: number;
  /** Creates isolates. Default: {@link createIsolatedVmFactory} (the real isolated-vm 5.x). */
  factory?: IsolateFactory;
  /** Healthy idle isolates kept warm between executions. Default 1. */
  maxIdleIsolates?: number;
  /** Timers one execution may have pending at once; it may create 100 times as many in total. Default 1000. */
  maxTimers?: number;
  /**
   * Console lines per execution, on top of the `maxOutputSize` byte cap (so a
   * flood of empty lines stays bounded); then `[output truncated at N lines]`. Default 10000.
   */
  maxLogLines?: number;
  /**
   * On Node 20+ without `--no-node-snapshot`, isolated-vm can crash the whole
   * process. `"error"` (default) refuses to create isolates and reports
   * `SANDBOX_ENGINE_FAILED`; `"ignore"` runs anyway at your own risk.
   */
  nodeSnapshot?: NodeSnapshotPolicy;
}

interface ResolvedLimits {
  timeout: number;
  memoryLimit: number;
  maxOutputSize: number;
}

const CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: true,
  tier: "V8 isolate (isolated-vm): a security boundary — separate heap with a heap limit (WebAssembly memory not counted), no host objects reachable",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
});

/**
 * Runs JavaScript in a V8 isolate through isolated-vm — the one engine that is
 * a security boundary on its own.
 *
 * A warm isolate is reused and every execution gets a fresh context in it;
 * concurrent executions lease their own isolates. Data crosses by structured
 * copy only; console lines stream to `options.onLog`; timers run inside the
 * isolate and are all cancelled when the execution ends. The timeout bounds
 * sync loops, microtask loops, promises and timers; exceeding `memoryLimit`
 * disposes the isolate (`SANDBOX_MEMORY_EXCEEDED`) and the next execution
 * gets a new one.
 *
 * @example
 * await using engine = new IsolateEngine({ timeout: 1000 });
 * const { result } = await engine.execute("2 + 3"); // 5
 */
export class IsolateEngine implements SandboxEngine, AsyncDisposable {
  /** Always `"isolate"`. */
  readonly name = "isolate" as const;
  /** What this engine guarantees. */
  readonly capabilities: EngineCapabilities = CAPABILITIES;

  private readonly limits: ResolvedLimits;
  private readonly factory: IsolateFactory;
  private readonly maxIdleIsolates: number;
  private readonly maxTimers: number;
  private readonly maxLogLines: number;
  private readonly nodeSnapshot: NodeSnapshotPolicy;
  private readonly modules = new Map<string, GuestModule>();
  private modulePayload: GuestPayload["modules"];
  private idle: IsolateSlot[] = [];
  private readonly active = new Set<Execution>();
  private destroyPromise: Promise<void> | undefined;

  /** @throws SandboxError `SANDBOX_INVALID_CONFIG` when a limit is not a positive integer. */
  constructor(options: IsolateEngineOptions = {}) {
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
    this.factory = options.factory ?? createIsolatedVmFactory();
    this.maxIdleIsolates = nonNegativeInteger(options.maxIdleIsolates, 1, "maxIdleIsolates");
    this.maxTimers = nonNegativeInteger(options.maxTimers, 1000, "maxTimers");
    this.maxLogLines = nonNegativeInteger(options.maxLogLines, 10_000, "maxLogLines");
    this.nodeSnapshot = options.nodeSnapshot ?? "error";
    if (this.nodeSnapshot !== "error" && this.nodeSnapshot !== "ignore") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `Invalid IsolateEngine option nodeSnapshot: expected "error" or "ignore" (got ${JSON.stringify(this.nodeSnapshot)})`,
      );
    }
  }

  /**
   * Run `code` in a fresh context. Resolves a result for every failure of the
   * code (and with `SANDBOX_ENGINE_DISPOSED` after destroy); rejects only
   * when `options` are invalid (`SANDBOX_INVALID_OPTIONS`).
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    if (this.destroyPromise !== undefined) return disposedResult();
    const opts = options === undefined ? {} : parseSandboxOptions(options);
    if (typeof code !== "string") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        `Invalid code: expected a string (got ${typeof code})`,
      );
    }
    if (context !== undefined && (context === null || typeof context !== "object")) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        `Invalid context: expected an object of globals (got ${context === null ? "null" : typeof context})`,
      );
    }
    const memoryLimitMiB = toMiB(opts.memoryLimit ?? this.limits.memoryLimit);
    let slot: IsolateSlot;
    try {
      slot = this.acquire(memoryLimitMiB);
    } catch (error) {
      return {
        success: false,
        error: error instanceof Error ? error.message : String(error),
        errorCode: SANDBOX_CODES.ENGINE_FAILED,
        duration: 0,
        logs: [],
      };
    }
    const execution = new Execution(this.factory, slot, {
      // toGuestScript only rewrites code with top-level await/return; skip its parse otherwise.
      code: MAY_NEED_WRAPPING.test(code) ? toGuestScript(code).source : code,
      context: context === undefined || isEmpty(context) ? undefined : context,
      modules: this.modulePayload,
      timeoutMs: opts.timeout ?? this.limits.timeout,
      maxOutputSize: opts.maxOutputSize ?? this.limits.maxOutputSize,
      maxTimers: this.maxTimers,
      maxTimerCreations: this.maxTimers * TIMER_CREATIONS_PER_PENDING,
      maxLogLines: this.maxLogLines,
      onLog: opts.onLog,
    });
    this.active.add(execution);
    const result = await execution.result;
    this.active.delete(execution);
    this.release(slot, execution.reusable);
    return result;
  }

  /**
   * Make a module available as a global of the same name in later executions.
   * `exports` is copied now (later changes to the host object are not seen).
   *
   * @throws SandboxError `SANDBOX_INVALID_MODULE` when the module is malformed or its exports cannot be copied,
   * `SANDBOX_ENGINE_DISPOSED` after {@link destroy}.
   */
  registerModule(module: SandboxModule): void {
    if (this.destroyPromise !== undefined) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "IsolateEngine.registerModule: the engine was destroyed; create a new IsolateEngine",
      );
    }
    const parsed = parseSandboxModule(module);
    const stored: GuestModule = { name: parsed.name, exports: undefined, source: parsed.source };
    if (parsed.exports !== undefined) {
      try {
        stored.exports = structuredClone(parsed.exports);
      } catch (error) {
        throw new SandboxError(
          SANDBOX_CODES.INVALID_MODULE,
          `Invalid module ${parsed.name}: exports must be structured-cloneable data to cross into the isolate (${error instanceof Error ? error.message : String(error)})`,
          { cause: error },
        );
      }
    }
    this.modules.set(parsed.name, stored);
    this.refreshModules();
  }

  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean {
    const removed = this.modules.delete(name);
    if (removed) this.refreshModules();
    return removed;
  }

  /** Drop registered modules and dispose the warm isolates (running executions finish normally). */
  reset(): void {
    this.modules.clear();
    this.refreshModules();
    for (const slot of this.idle.splice(0)) slot.dispose();
  }

  /**
   * Heap statistics (bytes) of the warm isolate, creating it when none is
   * warm; `null` after {@link destroy}.
   *
   * @throws SandboxError `SANDBOX_ENGINE_FAILED` when no isolate can be created.
   */
  getHeapStatistics(): IsolateHeapStatistics | null {
    if (this.destroyPromise !== undefined) return null;
    let slot = this.idle.find((candidate) => candidate.healthy);
    if (slot === undefined) {
      slot = this.createSlot(toMiB(this.limits.memoryLimit));
      this.idle.push(slot);
    }
    return { ...slot.isolate.getHeapStatisticsSync() };
  }

  /** End running executions (`SANDBOX_ENGINE_DISPOSED`) and dispose every isolate. Idempotent. */
  destroy(): Promise<void> {
    this.destroyPromise ??= this.destroyNow();
    return this.destroyPromise;
  }

  /** Same as {@link destroy}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private async destroyNow(): Promise<void> {
    const running = [...this.active];
    for (const execution of running) {
      execution.abort(SANDBOX_CODES.ENGINE_DISPOSED, "The engine was destroyed while the code ran");
    }
    await Promise.all(running.map((execution) => execution.result));
    for (const slot of this.idle.splice(0)) slot.dispose();
  }

  private acquire(memoryLimitMiB: number): IsolateSlot {
    while (this.idle.length > 0) {
      const index = this.idle.findIndex((slot) => slot.memoryLimitMiB === memoryLimitMiB);
      if (index === -1) break;
      const [slot] = this.idle.splice(index, 1);
      if (slot?.healthy) return slot;
      slot?.dispose();
    }
    return this.createSlot(memoryLimitMiB);
  }

  private createSlot(memoryLimitMiB: number): IsolateSlot {
    if (this.nodeSnapshot === "error" && needsNoNodeSnapshot() && !isNodeSnapshotDisabled()) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_FAILED,
        `IsolateEngine refuses to start: Node ${process.versions.node} runs with its startup snapshot, and isolated-vm requires \`node --no-node-snapshot\` on Node 20+ (without it V8's shared heap can crash the whole process). Start Node with --no-node-snapshot (test runners: pass it in the worker execArgv; NODE_OPTIONS also works), or pass { nodeSnapshot: "ignore" } to accept the risk`,
      );
    }
    return IsolateSlot.create(this.factory, memoryLimitMiB);
  }

  private release(slot: IsolateSlot, reusable: boolean): void {
    if (this.destroyPromise !== undefined || !reusable || !slot.healthy) {
      slot.dispose();
      return;
    }
    this.idle.push(slot);
    while (this.idle.length > this.maxIdleIsolates) this.idle.shift()?.dispose();
    if (this.idle.includes(slot)) slot.prepareSpare();
  }

  private refreshModules(): void {
    this.modulePayload = this.modules.size === 0 ? undefined : [...this.modules.values()];
  }
}

function disposedResult(): SandboxResult {
  return {
    success: false,
    error: new SandboxError(
      SANDBOX_CODES.ENGINE_DISPOSED,
      "The IsolateEngine was destroyed; create a new engine to run more code",
    ).message,
    errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
    duration: 0,
    logs: [],
  };
}

function toMiB(bytes: number): number {
  return Math.max(MIN_MEMORY_LIMIT_MIB, Math.ceil(bytes / MIB));
}

function isEmpty(record: Record<string, unknown>): boolean {
  return Object.keys(record).length === 0;
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

function withoutUndefined<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
