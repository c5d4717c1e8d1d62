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
  type EngineRun,
  EngineShell,
  type GuestDriver,
  GuestScriptCache,
  type PreparedVmRealm,
  prepareVmRealm,
  type ReadyRequest,
  startVmExecution,
  TIMER_CREATIONS_PER_PENDING,
  toSandboxResult,
} from "@suaveplan/sandbox-guest";

/** What the vm engine guarantees — and what it does not. */
export const VM_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: false,
  tier: "node:vm context in the host process: NOT a security boundary — defence in depth only",
  enforcesMemoryLimit: false,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: false,
  measuresCpu: "entries",
  memoryAccounting: Object.freeze({
    kinds: Object.freeze({
      heap: false,
      strings: false,
      arrayBuffers: false,
      sharedArrayBuffers: false,
      wasmMemory: false,
    }),
    exactness:
      "Not enforced: the guest allocates in the host's own isolate, which node cannot limit per context; an allocation bomb can end the host process. Use worker, spawn or isolate to bound memory.",
  }),
} satisfies EngineCapabilities);

/** Options of {@link VmEngine}; every field is optional. */
export interface VmEngineOptions extends Partial<EngineLimits> {
  /**
   * Let SIGINT (Ctrl-C) stop the guest's synchronous code (node:vm's
   * `breakOnSigint`): the run resolves `SANDBOX_CANCELLED` (default false).
   * Without it a busy loop holds the thread, and with it every signal
   * handler, until `timeout`. While guest code runs, node detaches the
   * process's `SIGINT` listeners, so the signal that stopped the code is not
   * delivered to them: a CLI that exits on Ctrl-C treats that
   * `SANDBOX_CANCELLED` as its SIGINT. For command-line hosts; a server
   * should leave it off (a Ctrl-C meant for it would only cancel a run).
   */
  breakOnSigint?: boolean;
}

/**
 * Runs guest JavaScript in a fresh `node:vm` context per execution, on the
 * shared guest runtime (`@suaveplan/sandbox-guest`): the same kernel, codec,
 * console formatting and error codes as every other engine.
 *
 * - `timeout` (ms) bounds sync loops, microtask loops, pending timers and
 *   never-settling promises (`microtaskMode: "afterEvaluate"`).
 * - String code generation and WebAssembly are disabled in the context;
 *   dynamic `import()` rejects with a guest-realm error.
 * - `memoryLimit` is accepted but NOT enforced: node:vm shares the host's
 *   heap and cannot bound it (`capabilities.enforcesMemoryLimit` is false).
 *
 * node:vm is NOT a security boundary: treat this engine as defence in depth
 * for code you mostly trust. Use the isolate engine (or a confined spawn
 * engine) for hostile code.
 *
 * @example
 * const engine = new VmEngine({ timeout: 5000, maxOutputSize: 1024 });
 * const { result } = await engine.execute("2 + 3"); // 5
 * await engine.destroy();
 */
export class VmEngine extends EngineShell {
  /** Always `"vm"`. */
  readonly name = "vm" as const;
  /** See {@link VM_CAPABILITIES}. */
  readonly capabilities: EngineCapabilities = VM_CAPABILITIES;
  /** Compiled user scripts, by exact prepared source. */
  private readonly scripts = new GuestScriptCache();
  /** The next execution's fresh context, made in idle time so it is off the caller's path; single-use. */
  private spare: PreparedVmRealm | undefined;
  private spareTimer: NodeJS.Immediate | undefined;
  private readonly breakOnSigint: boolean;

  /**
   * @param options - `timeout` (ms, default 5000), `maxOutputSize` (bytes,
   * default 1 MiB), `memoryLimit` (bytes; accepted, not enforced; bounds the result's size),
   * `breakOnSigint` (default false).
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when a limit is not a positive integer,
   * or `breakOnSigint` is not a boolean.
   */
  constructor(options: VmEngineOptions = {}) {
    // The realm is in this isolate, so a context of primitives crosses as is.
    super("VmEngine", { ...parseEngineLimits(options), contextByReference: true });
    if (options.breakOnSigint !== undefined && typeof options.breakOnSigint !== "boolean") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `VmEngine: breakOnSigint must be true or false (got ${typeof options.breakOnSigint})`,
      );
    }
    this.breakOnSigint = options.breakOnSigint === true;
    this.prepareSpare();
  }

  /**
   * Run `code` in a fresh context. Resolves a result for every failure —
   * the guest's (`SANDBOX_GUEST_ERROR`, `SANDBOX_SYNTAX_ERROR`,
   * `SANDBOX_RESULT_NOT_TRANSFERABLE`, `SANDBOX_TIMEOUT`), bad input
   * (`SANDBOX_INVALID_OPTIONS`) and use after {@link destroy}
   * (`SANDBOX_ENGINE_DISPOSED`). The guest's synchronous code runs on this
   * thread: an abort lands at its next await, timer or tool call. Never rejects.
   */
  protected start({ request, hostCalls, onLog }: ReadyRequest): EngineRun | SandboxResult {
    let driver: GuestDriver;
    try {
      const prepared = this.spare;
      this.spare = undefined;
      driver = startVmExecution(request, {
        prepared,
        onLog,
        onCall:
          hostCalls === undefined
            ? undefined
            : (call) => {
                void answerCall(call, hostCalls).then((reply) => driver.reply(reply));
                return undefined;
              },
        script: this.scripts.compile(request.code),
        // A provably bounded pure expression, with no source module registered (see `straightLine`).
        watchdog: request.straightLine !== true,
        // Alone, a straight-line run settles without a macrotask. Among others it keeps the one hop:
        // without it back-to-back runs chain in microtasks, and the next context's preparation and
        // V8's GC tasks wait (measured, 8 callers: ~20 % fewer calls/s).
        settleAtOnce: this.running === 0,
        // Alone, the context is emptied after the result is handed over; among others at once (ditto).
        teardownLater: this.running === 0,
        breakOnSigint: this.breakOnSigint,
      });
    } catch (error) {
      // Only the host can fail here (e.g. out of memory creating a context); never reject.
      return failure(
        SANDBOX_CODES.ENGINE_FAILED,
        `VmEngine could not run the code: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return {
      abort: (outcome) => driver.abort(outcome),
      result: driver.result.then((ended) => {
        this.prepareSpare();
        return toSandboxResult(ended.outcome, ended);
      }),
    };
  }

  /** Drop every registered module and the compiled-script cache. */
  override reset(): void {
    super.reset();
    this.scripts.clear();
  }

  /** Drop the spare context and the compiled scripts (running executions were ended first). */
  protected dispose(): void {
    if (this.spareTimer !== undefined) clearImmediate(this.spareTimer);
    this.spareTimer = undefined;
    this.spare = undefined;
    this.scripts.clear();
  }

  /** Make the next execution's context once the current task is done (never on the caller's path). */
  private prepareSpare(): void {
    if (this.destroyed || this.spare !== undefined || this.spareTimer !== undefined) return;
    this.spareTimer = setImmediate(() => {
      this.spareTimer = undefined;
      if (this.destroyed || this.spare !== undefined) return;
      try {
        this.spare = prepareVmRealm({
          maxTimers: DEFAULT_MAX_TIMERS,
          maxTimerCreations: DEFAULT_MAX_TIMERS * TIMER_CREATIONS_PER_PENDING,
        });
      } catch {
        // Out of memory or similar: the next execution makes its own context.
      }
    });
    this.spareTimer.unref();
  }
}
