import { performance } from "node:perf_hooks";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import {
  type EngineCapabilities,
  type EngineLimits,
  type EngineName,
  failure,
  type SandboxEngine,
  type SandboxModule,
  type SandboxOptions,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { ModuleRegistry } from "../prepare/module-registry.js";
import {
  type BuiltRequest,
  buildExecutionRequest,
  type RequestDefaults,
} from "../prepare/prepare-execution.js";
import type { GuestOutcome } from "../protocol/protocol.js";

/** A request that passed every check: what {@link EngineShell.start} runs. */
export type ReadyRequest = Extract<BuiltRequest, { ok: true }>;

/** What {@link EngineShellBase.prepare} makes of valid input: at least the run's `options.signal`. */
export interface PreparedRun {
  readonly ok: true;
  /** Cancels the run (`options.signal`). */
  readonly signal: AbortSignal | undefined;
}

/**
 * What the shell's "destroyed" guards say (the code is appended to each).
 * {@link EngineShell} words them after the engine's class name.
 */
export interface DisposedWording {
  /** `execute` after `destroy()`: resolved as `SANDBOX_ENGINE_DISPOSED`. */
  readonly execute: string;
  /** `registerModule` after `destroy()`: thrown as `SANDBOX_ENGINE_DISPOSED`. */
  readonly registerModule: string;
  /** A live run that `destroy()` ended: its `SANDBOX_ENGINE_DISPOSED` result. */
  readonly running: string;
}

/** One run the shell keeps until it ends: how to end it early, and its result. */
export interface EngineRun {
  /**
   * End the run now with `outcome` (`cancelled` for `options.signal`,
   * `disposed` for `destroy()`); its {@link result} then reports it. May be
   * called more than once and after the run ended.
   */
  abort(outcome: GuestOutcome): void;
  /** The run's result, whatever ended it. Never rejects. */
  readonly result: Promise<SandboxResult>;
}

/**
 * The lifecycle every engine shares, whatever it makes of its input: the
 * registered modules, an already aborted signal, the set of live runs with
 * `options.signal` wired to each, the "destroyed" guards with their wording,
 * and a `destroy()` that ends every live run (`SANDBOX_ENGINE_DISPOSED`),
 * waits for them, then releases the engine's own resources — once, however
 * often it is called.
 *
 * An engine that runs code here extends {@link EngineShell}, which prepares
 * the full request. One that hands the run to another machine (the queue's
 * caller side) extends this, with {@link prepare} checking the input and
 * keeping what it sends.
 */
export abstract class EngineShellBase<Ready extends PreparedRun> implements SandboxEngine, AsyncDisposable {
  /** Which engine this is. */
  abstract readonly name: EngineName;
  /** What this engine guarantees. */
  abstract readonly capabilities: EngineCapabilities;
  /** The limits every execution starts from (per-execution options override them). */
  readonly limits: Readonly<EngineLimits>;
  /** The modules every execution gets (see {@link registerModule}). */
  protected readonly modules = new ModuleRegistry();
  private readonly live = new Set<EngineRun>();
  private destroyPromise: Promise<void> | undefined;

  /**
   * @param wording - What the "destroyed" guards say.
   * @param limits - The limits every execution starts from.
   */
  protected constructor(
    private readonly wording: DisposedWording,
    limits: EngineLimits,
  ) {
    const { timeout, memoryLimit, maxOutputSize } = limits;
    this.limits = { timeout, memoryLimit, maxOutputSize };
  }

  /**
   * Check `execute`'s arguments and make what {@link start} needs of them,
   * or the failure bad input resolves (`SANDBOX_INVALID_OPTIONS` …). Called
   * only while the engine is not destroyed. Must not throw.
   */
  protected abstract prepare(
    code: string,
    context: Record<string, unknown> | undefined,
    options: SandboxOptions | undefined,
  ): Ready | { ok: false; result: SandboxResult };

  /**
   * Start one prepared run. Return the run, or the result of a run the
   * engine refuses or cannot start (a memory limit below its minimum,
   * no process could be spawned). Called only while the engine is not
   * destroyed and the signal is not aborted; a run it returns after either
   * happened (while it waited for a worker, say) is aborted at once.
   * Must not throw.
   *
   * @param startedAt - `performance.now()` when `execute` was called.
   */
  protected abstract start(
    ready: Ready,
    startedAt: number,
  ): EngineRun | SandboxResult | Promise<EngineRun | SandboxResult>;

  /** Release the engine's own resources; called once, after every live run ended. */
  protected abstract dispose(): void | Promise<void>;

  /** Whether {@link destroy} was called. */
  protected get destroyed(): boolean {
    return this.destroyPromise !== undefined;
  }

  /** How many runs are live now. */
  protected get running(): number {
    return this.live.size;
  }

  /**
   * Run `code` with `context` as globals. Resolves a result for every
   * failure — the guest's, bad input (`SANDBOX_INVALID_OPTIONS`,
   * `SANDBOX_CODE_BLOCKED`, `SANDBOX_SYNTAX_ERROR`), `options.signal`
   * (`SANDBOX_CANCELLED`), the engine's own (see each engine) and use after
   * {@link destroy} (`SANDBOX_ENGINE_DISPOSED`). Never rejects.
   */
  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    const startedAt = performance.now();
    if (this.destroyPromise !== undefined) {
      return failure(SANDBOX_CODES.ENGINE_DISPOSED, this.wording.execute);
    }
    const ready = this.prepare(code, context, options);
    if (!ready.ok) return ready.result;
    const { signal } = ready;
    if (signal?.aborted === true) {
      return failure(SANDBOX_CODES.CANCELLED, "Execution was cancelled before it started");
    }
    const started = await this.start(ready, startedAt);
    if (!("abort" in started)) return started;
    const run = started;
    this.live.add(run);
    const onAbort = () => run.abort({ kind: "cancelled" });
    signal?.addEventListener("abort", onAbort, { once: true });
    // Either may have happened while the engine started the run (an `abort` event is not repeated).
    if (this.destroyPromise !== undefined) run.abort(this.disposedWhileRunning());
    else if (aborted(signal)) run.abort({ kind: "cancelled" });
    try {
      return await run.result;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.live.delete(run);
    }
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
    if (this.destroyPromise !== undefined) {
      throw new SandboxError(SANDBOX_CODES.ENGINE_DISPOSED, this.wording.registerModule);
    }
    this.modules.register(module);
  }

  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean {
    return this.modules.unregister(name);
  }

  /** Drop every registered module (an engine that keeps warm state drops it too). */
  reset(): void {
    this.modules.clear();
  }

  /**
   * End every running execution (each resolves `SANDBOX_ENGINE_DISPOSED`),
   * wait until they ended, then release everything the engine holds.
   * Idempotent: later calls return the same promise.
   */
  destroy(): Promise<void> {
    this.destroyPromise ??= this.shutdown();
    return this.destroyPromise;
  }

  /** Same as {@link destroy}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private async shutdown(): Promise<void> {
    // Not inside the caller's stack: `destroy()` may be called from a console line or a tool
    // call the realm's thread is waiting on.
    await new Promise((resolve) => setImmediate(resolve));
    const runs = [...this.live];
    for (const run of runs) run.abort(this.disposedWhileRunning());
    this.modules.clear();
    await Promise.all(runs.map((run) => run.result));
    await this.dispose();
  }

  private disposedWhileRunning(): GuestOutcome {
    return { kind: "disposed", message: this.wording.running };
  }
}

/**
 * What every engine that runs code here shares, so an engine keeps only its
 * lifecycle, its transport and its capabilities: {@link EngineShellBase}'s
 * modules, guards, live runs and `destroy()`, with each run prepared as a
 * full request (`buildExecutionRequest`: the argument checks, TypeScript
 * erased, one parse, the `import()` check, the context encoded).
 *
 * An engine extends it and implements {@link start} (run one checked
 * request) and {@link dispose} (release what it holds); it may override
 * `reset()` (calling `super.reset()`) to drop warm state.
 *
 * @example
 * class EchoEngine extends EngineShell {
 *   readonly name = "echo";
 *   readonly capabilities = ECHO_CAPABILITIES;
 *   constructor() { super("EchoEngine", SANDBOX_DEFAULTS); }
 *   protected start(ready: ReadyRequest): EngineRun { … }
 *   protected dispose(): void {}
 * }
 */
export abstract class EngineShell extends EngineShellBase<ReadyRequest> {
  /**
   * @param label - The engine's class name, as messages name it ("WorkerEngine").
   * @param defaults - The limits, plus what the engine's realm needs of every request.
   */
  protected constructor(
    label: string,
    private readonly defaults: RequestDefaults,
  ) {
    super(
      {
        execute: `${label} was destroyed; create a new ${label} to run code`,
        registerModule: `${label}.registerModule: the engine was destroyed; create a new ${label}`,
        running: `${label} was destroyed while the code ran`,
      },
      defaults,
    );
  }

  protected prepare(
    code: string,
    context: Record<string, unknown> | undefined,
    options: SandboxOptions | undefined,
  ): BuiltRequest {
    return buildExecutionRequest(code, context, options, this.defaults, this.modules);
  }
}

/** Whether `signal` is aborted (a call, so a check after an `await` is not narrowed away). */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}
