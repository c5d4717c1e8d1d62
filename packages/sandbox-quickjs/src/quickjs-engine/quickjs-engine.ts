import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import {
  type EngineCapabilities,
  type EngineLimits,
  failure,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import {
  answerCall,
  DEFAULT_MAX_TIMERS,
  driverPlanOf,
  type EngineRun,
  EngineShell,
  GuestDriver,
  type ReadyRequest,
  TIMER_CREATIONS_PER_PENDING,
  toSandboxResult,
} from "@suaveplan/sandbox-guest";
import { createQuickJsRealm } from "../internal/quickjs-realm.js";
import { QuickJsSlot, type SlotLimits, slotKey } from "../internal/quickjs-slot.js";

/** What the quickjs engine guarantees — and what it does not. */
export const QUICKJS_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: true,
  javascriptEngine: "quickjs",
  tier: "QuickJS compiled to WebAssembly, in this process: a security boundary — the guest's heap is the module's own linear memory, capped at memoryLimit, and no host object is reachable; an interpreter without a JIT, so compute-heavy code runs many times slower than on V8",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: false,
  measuresCpu: "entries",
  memoryAccounting: Object.freeze({
    kinds: Object.freeze({
      heap: "allocation",
      strings: "allocation",
      arrayBuffers: "allocation",
      sharedArrayBuffers: "allocation",
      wasmMemory: "allocation",
    }),
    exactness:
      "Every allocation comes from the module's linear memory, which may grow to the kernel's image plus memoryLimit and no further: objects, strings, array buffers and shared ones alike (the free space the module starts with, up to 9 MiB, comes on top). There is no WebAssembly inside QuickJS, so a guest cannot make Wasm memory.",
  }),
} satisfies EngineCapabilities);

/** Options of {@link QuickJsEngine}; every field is optional. */
export interface QuickJsEngineOptions extends Partial<EngineLimits> {
  /** QuickJS instances kept warm between executions, per memory limit (default 2). */
  maxIdleSlots?: number;
  /**
   * Let SIGINT (Ctrl-C) stop the guest's synchronous code, which runs on
   * this thread: the run resolves `SANDBOX_CANCELLED` (default false), as
   * `VmEngine`'s option of the same name. While guest code runs, node
   * detaches the process's `SIGINT` listeners, so the signal that stopped the
   * code is not delivered to them: a CLI that exits on Ctrl-C treats that
   * `SANDBOX_CANCELLED` as its SIGINT. For command-line hosts.
   */
  breakOnSigint?: boolean;
}

/**
 * Runs guest JavaScript in QuickJS (quickjs-ng) compiled to WebAssembly, on
 * the shared guest runtime (`@suaveplan/sandbox-guest`): the same kernel,
 * codec, console formatting and error codes as every other engine.
 *
 * Each concurrent execution leases its own QuickJS instance (a "slot": one
 * WebAssembly module instance with its own memory). A slot compiles the
 * kernel once and keeps an image of its memory; every execution starts from
 * that image, so nothing of an earlier run remains. The timeout stops
 * synchronous code through QuickJS's interrupt handler; the memory limit
 * caps the slot's memory.
 *
 * @example
 * const engine = new QuickJsEngine({ timeout: 5000 });
 * const { result } = await engine.execute("2 + 3"); // 5
 * await engine.destroy();
 */
export class QuickJsEngine extends EngineShell {
  /** Always `"quickjs"`. */
  readonly name = "quickjs" as const;
  /** See {@link QUICKJS_CAPABILITIES}. */
  readonly capabilities: EngineCapabilities = QUICKJS_CAPABILITIES;
  /** Warm slots by {@link slotKey}. */
  private readonly idle = new Map<string, QuickJsSlot[]>();
  /** Slots being made off the callers' path, by {@link slotKey}. */
  private readonly making = new Map<string, Promise<QuickJsSlot | undefined>>();
  private readonly maxIdleSlots: number;
  private readonly breakOnSigint: boolean;
  private readonly defaultLimits: SlotLimits;

  /**
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when a limit is not a positive integer.
   */
  constructor(options: QuickJsEngineOptions = {}) {
    super("QuickJsEngine", parseEngineLimits(options));
    const maxIdle = options.maxIdleSlots ?? 2;
    if (!Number.isInteger(maxIdle) || maxIdle < 0) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `QuickJsEngine: maxIdleSlots must be a non-negative integer (got ${String(maxIdle)})`,
      );
    }
    this.maxIdleSlots = maxIdle;
    if (options.breakOnSigint !== undefined && typeof options.breakOnSigint !== "boolean") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `QuickJsEngine: breakOnSigint must be true or false (got ${typeof options.breakOnSigint})`,
      );
    }
    this.breakOnSigint = options.breakOnSigint === true;
    this.defaultLimits = {
      memoryLimit: this.limits.memoryLimit,
      maxTimers: DEFAULT_MAX_TIMERS,
      maxTimerCreations: DEFAULT_MAX_TIMERS * TIMER_CREATIONS_PER_PENDING,
    };
    // The first QuickJS instance, made once the caller's task is done: compiling the kernel in it
    // takes tens of ms of this thread, better spent before the first execution than in it.
    const timer = setImmediate(() => this.prepareSpare(this.defaultLimits));
    timer.unref();
  }

  protected async start(ready: ReadyRequest): Promise<EngineRun | SandboxResult> {
    const { request, hostCalls, onLog, memoryLimit } = ready;
    const limits = {
      memoryLimit,
      maxTimers: request.maxTimers,
      maxTimerCreations: request.maxTimerCreations,
    };
    let slot: QuickJsSlot;
    try {
      slot = await this.takeSlot(limits);
    } catch (error) {
      return failure(
        SANDBOX_CODES.ENGINE_FAILED,
        `QuickJsEngine could not start QuickJS: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    let driver: GuestDriver;
    driver = new GuestDriver(
      driverPlanOf(request, {
        onLog,
        onCall:
          hostCalls === undefined
            ? undefined
            : (call) => {
                void answerCall(call, hostCalls).then((reply) => driver.reply(reply));
                return undefined;
              },
      }),
      createQuickJsRealm({
        slot,
        code: request.code,
        breakOnSigint: this.breakOnSigint,
        onRelease: (released) => this.giveBack(released),
      }),
    );
    return {
      abort: (outcome) => driver.abort(outcome),
      result: driver.result.then((ended) => toSandboxResult(ended.outcome, ended)),
    };
  }

  /** Drop the warm slots (running executions were ended first; a slot still being made is dropped when done). */
  protected dispose(): void {
    this.idle.clear();
  }

  /** A warm slot for `limits`, or the one being made, or a new one; then another is made off the path. */
  private async takeSlot(limits: SlotLimits): Promise<QuickJsSlot> {
    const key = slotKey(limits);
    let slot = this.idle.get(key)?.pop();
    if (slot === undefined) {
      const making = this.making.get(key);
      if (making !== undefined) {
        this.making.delete(key);
        slot = await making;
      }
    }
    slot ??= await QuickJsSlot.create(limits);
    if ((this.idle.get(key)?.length ?? 0) === 0) {
      const timer = setImmediate(() => this.prepareSpare(limits));
      timer.unref();
    }
    return slot;
  }

  /** Make a slot for `limits` in the background, unless one is warm or on its way. */
  private prepareSpare(limits: SlotLimits): void {
    const key = slotKey(limits);
    if (
      this.destroyed ||
      this.maxIdleSlots === 0 ||
      this.making.has(key) ||
      (this.idle.get(key)?.length ?? 0) > 0
    )
      return;
    const making = QuickJsSlot.create(limits).then(
      (slot) => slot,
      () => undefined, // the next execution makes its own (and reports why it could not)
    );
    this.making.set(key, making);
    void making.then((slot) => {
      if (this.making.get(key) !== making) return; // taken by an execution meanwhile
      this.making.delete(key);
      if (slot !== undefined) this.giveBack(slot);
    });
  }

  /**
   * Keep a slot warm for the next execution, unless it is unsound, or its
   * memory grew past the module's first 16 MiB (WebAssembly memory never
   * shrinks: a slot a memory bomb grew would hold up to memoryLimit for good).
   */
  private giveBack(slot: QuickJsSlot): void {
    if (this.destroyed || !slot.healthy || slot.grown) return;
    const key = slotKey(slot.limits);
    const list = this.idle.get(key) ?? [];
    if (list.length >= this.maxIdleSlots) return;
    list.push(slot);
    this.idle.set(key, list);
  }
}
