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
  answerCall,
  buildExecutionRequest,
  driverPlanOf,
  GuestDriver,
  ModuleRegistry,
  type RequestDefaults,
  toSandboxResult,
  withoutCode,
} from "@suaveplan/sandbox-guest";
import { IsolatePool } from "../internal/isolate-pool.js";
import { createIsolateRealm } from "../internal/isolate-realm.js";
import type { IsolateSlot } from "../internal/isolate-slot.js";
import type { IsolateFactory, IsolateHeapStatistics } from "../isolate-factory/isolate-factory.js";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";
import { isNodeSnapshotDisabled, needsNoNodeSnapshot } from "../node-snapshot/node-snapshot.js";

/** isolated-vm refuses heap limits below this, in MiB. */
const MIN_MEMORY_LIMIT_MIB = 8;
const MIB = 1024 * 1024;

/** What to do when Node runs without `--no-node-snapshot` (see the README). */
export type NodeSnapshotPolicy = "error" | "ignore";

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
   * On Node 20+ without `--no-node-snapshot`, isolated-vm can crash the whole
   * process. `"error"` (default) refuses to create isolates and reports
   * `SANDBOX_ENGINE_UNAVAILABLE`; `"ignore"` runs anyway at your own risk.
   */
  nodeSnapshot?: NodeSnapshotPolicy;
}

/** What the isolate engine guarantees. */
export const ISOLATE_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: true,
  tier: "V8 isolate (isolated-vm): a security boundary — separate heap with a heap limit (WebAssembly memory not counted), no host objects reachable",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: true,
  measuresCpu: "isolate",
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
 * @example
 * await using engine = new IsolateEngine({ timeout: 1000 });
 * const { result } = await engine.execute("2 + 3"); // 5
 */
export class IsolateEngine implements SandboxEngine, AsyncDisposable {
  /** Always `"isolate"`. */
  readonly name = "isolate" as const;
  /** See {@link ISOLATE_CAPABILITIES}. */
  readonly capabilities: EngineCapabilities = ISOLATE_CAPABILITIES;
  /** The limits every execution starts from (per-execution options override them). */
  readonly limits: Readonly<EngineLimits>;
  private readonly defaults: RequestDefaults;
  private readonly factory: IsolateFactory;
  private readonly pool: IsolatePool;
  private readonly modules = new ModuleRegistry();
  private readonly live = new Set<GuestDriver>();
  private destroyPromise: Promise<void> | undefined;

  /** @throws SandboxError `SANDBOX_INVALID_CONFIG` when an option is invalid. */
  constructor(options: IsolateEngineOptions = {}) {
    this.limits = parseEngineLimits(options);
    this.defaults = {
      ...this.limits,
      maxTimers: nonNegativeInteger(options.maxTimers, 1000, "maxTimers"),
      maxLogLines: nonNegativeInteger(options.maxLogLines, 10_000, "maxLogLines"),
    };
    const nodeSnapshot = options.nodeSnapshot ?? "error";
    if (nodeSnapshot !== "error" && nodeSnapshot !== "ignore") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `Invalid IsolateEngine option nodeSnapshot: expected "error" or "ignore" (got ${JSON.stringify(nodeSnapshot)})`,
      );
    }
    this.factory = options.factory ?? createIsolatedVmFactory();
    const maxIdle = nonNegativeInteger(options.maxIdleIsolates, 1, "maxIdleIsolates");
    this.pool = new IsolatePool(this.factory, maxIdle, () => {
      if (nodeSnapshot === "error") refuseNodeSnapshot();
    });
  }

  /**
   * Run `code` in a fresh context. Resolves a result for every failure —
   * the guest's (`SANDBOX_GUEST_ERROR`, `SANDBOX_SYNTAX_ERROR`,
   * `SANDBOX_RESULT_NOT_TRANSFERABLE`, `SANDBOX_TIMEOUT`,
   * `SANDBOX_MEMORY_EXCEEDED`), bad input (`SANDBOX_INVALID_OPTIONS`), an
   * unusable isolated-vm (`SANDBOX_ENGINE_UNAVAILABLE`), `options.signal`
   * (`SANDBOX_CANCELLED`: running code is stopped at once) and use after
   * {@link destroy} (`SANDBOX_ENGINE_DISPOSED`). `options.hostCalls` answers
   * the guest's `tools.<name>(input)`. Never rejects.
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    if (this.destroyPromise !== undefined) return disposed();
    const built = buildExecutionRequest(code, context, options, this.defaults, this.modules);
    if (!built.ok) return built.result;
    const { request, signal, hostCalls } = built;
    if (signal?.aborted === true) return cancelled();
    let slot: IsolateSlot;
    try {
      slot = this.pool.acquire(toMiB(built.memoryLimit));
    } catch (error) {
      const errorCode = error instanceof SandboxError ? error.code : SANDBOX_CODES.ENGINE_FAILED;
      return failure(errorCode, withoutCode(error));
    }
    let released!: () => void;
    const slotBack = new Promise<void>((resolve) => {
      released = resolve;
    });
    const driver = new GuestDriver(
      // The isolate enforces whole MiB; a result may cost the host as much.
      {
        ...driverPlanOf(request, { onLog: built.onLog }),
        maxResultBytes: slot.memoryLimitMiB * MIB,
        onCall:
          hostCalls === undefined
            ? undefined
            : (call) => {
                void answerCall(call, hostCalls).then((reply) => driver.reply(reply));
                return undefined;
              },
      },
      createIsolateRealm({
        slot,
        factory: this.factory,
        code: request.code,
        maxTimers: request.maxTimers,
        maxTimerCreations: request.maxTimerCreations,
        onRelease: (back, reusable) => {
          this.pool.release(back, reusable);
          released();
        },
      }),
    );
    this.live.add(driver);
    // The code runs on isolated-vm's thread: an abort stops it now (the isolate is disposed if it is busy).
    const onAbort = () => driver.abort({ kind: "cancelled" });
    signal?.addEventListener("abort", onAbort, { once: true });
    const ended = await driver.result;
    signal?.removeEventListener("abort", onAbort);
    this.live.delete(driver);
    // A call the deadline overtook comes back in a moment: wait, so the next execution finds the warm isolate.
    await slotBack;
    return toSandboxResult(ended.outcome, ended);
  }

  /**
   * Make a module available to later executions as a global named
   * `module.name`: `exports` (plain data, copied in by the codec) or `source`
   * (guest JavaScript assigning `module.exports`, evaluated inside each
   * execution). Replaces a module of the same name.
   * @throws SandboxError `SANDBOX_INVALID_MODULE` (bad name, exports that cannot
   * cross, source that does not compile) or `SANDBOX_ENGINE_DISPOSED`.
   */
  registerModule(module: SandboxModule): void {
    if (this.destroyPromise !== undefined) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        "IsolateEngine.registerModule: the engine was destroyed; create a new IsolateEngine",
      );
    }
    this.modules.register(module);
  }

  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean {
    return this.modules.unregister(name);
  }

  /** Drop registered modules and dispose the warm isolates (running executions finish normally). */
  reset(): void {
    this.modules.clear();
    this.pool.clearIdle();
  }

  /**
   * Heap statistics (bytes) of the warm isolate, creating it when none is
   * warm; `null` after {@link destroy}.
   *
   * @throws SandboxError `SANDBOX_ENGINE_UNAVAILABLE` when no isolate can be created.
   */
  getHeapStatistics(): IsolateHeapStatistics | null {
    if (this.destroyPromise !== undefined) return null;
    return { ...this.pool.warm(toMiB(this.limits.memoryLimit)).isolate.getHeapStatisticsSync() };
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
    // Not inside the caller's stack: it may be a console line the isolate waits on.
    await new Promise((resolve) => setImmediate(resolve));
    const running = [...this.live];
    for (const driver of running) {
      driver.abort({ kind: "disposed", message: "IsolateEngine was destroyed while the code ran" });
    }
    await Promise.all(running.map((driver) => driver.result));
    this.pool.close();
    this.modules.clear();
  }
}

function disposed(): SandboxResult {
  return failure(
    SANDBOX_CODES.ENGINE_DISPOSED,
    "IsolateEngine was destroyed; create a new IsolateEngine to run code",
  );
}

function refuseNodeSnapshot(): void {
  if (!needsNoNodeSnapshot() || isNodeSnapshotDisabled()) return;
  throw new SandboxError(
    SANDBOX_CODES.ENGINE_UNAVAILABLE,
    `IsolateEngine refuses to start: Node ${process.versions.node} runs with its startup snapshot, and isolated-vm requires \`node --no-node-snapshot\` on Node 20+ (without it V8's shared heap can crash the whole process). Start Node with --no-node-snapshot (test runners: pass it in the worker execArgv; NODE_OPTIONS also works), or pass { nodeSnapshot: "ignore" } to accept the risk`,
  );
}

function cancelled(): SandboxResult {
  return failure(SANDBOX_CODES.CANCELLED, "Execution was cancelled before it started");
}

function toMiB(bytes: number): number {
  return Math.max(MIN_MEMORY_LIMIT_MIB, Math.ceil(bytes / MIB));
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
