import { performance } from "node:perf_hooks";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { LogCollector } from "@suaveplan/sandbox-core/resource-limiter";
import type { LogEntry, LogLevel, SandboxResult } from "@suaveplan/sandbox-core/types";
import type { IsolateContext, IsolateFactory, IsolateReference } from "../isolate-factory/isolate-factory.js";
import { type GuestPayload, PAYLOAD_GLOBAL } from "./guest-bootstrap.js";
import type { IsolateSlot } from "./isolate-slot.js";
import { containsSharedMemory } from "./shared-memory.js";

/** Longest timer delay Node accepts, in ms. */
const MAX_DELAY_MS = 2_147_483_647;
const LEVELS: ReadonlySet<string> = new Set<LogLevel>(["log", "info", "warn", "error", "debug"]);

/** What one execution needs. @internal */
export interface ExecutionRequest {
  /** Prepared guest code. */
  code: string;
  /** Globals to copy in. */
  context: Record<string, unknown> | undefined;
  /** Modules to install (exports already copied at registration). */
  modules: GuestPayload["modules"];
  /** Wall-clock budget, in ms. */
  timeoutMs: number;
  /** Console budget, in bytes. */
  maxOutputSize: number;
  /** Pending timers allowed at once. */
  maxTimers: number;
  /** Timers allowed to be created in total. */
  maxTimerCreations: number;
  /** Console lines allowed in total. */
  maxLogLines: number;
  /** Streaming log sink. */
  onLog: ((entry: LogEntry) => void) | undefined;
}

interface HostTimer {
  readonly repeat: boolean;
  readonly delay: number;
  handle: NodeJS.Timeout | undefined;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: string; code: SandboxCode | undefined };

/**
 * Host side of one execution in a fresh context of a leased isolate.
 *
 * It is finished at a quiescent point (no isolate call in flight) once the
 * guest reported its outcome and no timer is pending, or at once when the
 * deadline passes or the engine is destroyed. Finishing cancels every host
 * timer; when an isolate call is still in flight the isolate is disposed so
 * nothing keeps running, otherwise only the context is released.
 *
 * @internal
 */
export class Execution {
  private readonly logs: LogCollector;
  private readonly emitLog: ((entry: LogEntry) => void) | undefined;
  private logLines = 0;
  private timersCreated = 0;
  private readonly timers = new Map<number, HostTimer>();
  private readonly due: number[] = [];
  private readonly startedAt = performance.now();
  private readonly deadline: number;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private context: IsolateContext | undefined;
  private fire: IsolateReference | undefined;
  private outcome: Outcome | undefined;
  private inFlight = 0;
  private settled = false;
  private syntaxCandidate = false;
  private resolveResult!: (result: SandboxResult) => void;
  /** Resolves with the result once the execution finished and its resources were released. */
  readonly result: Promise<SandboxResult>;
  /** True when the isolate may serve another execution. Valid once `result` resolved. */
  reusable = false;

  constructor(
    private readonly factory: IsolateFactory,
    private readonly slot: IsolateSlot,
    private readonly request: ExecutionRequest,
  ) {
    const { onLog } = request;
    this.emitLog =
      onLog === undefined
        ? undefined
        : (entry) => {
            try {
              onLog(entry);
            } catch {
              // A throwing onLog must not break the execution (or reach the guest).
            }
          };
    this.logs = new LogCollector(request.maxOutputSize, this.emitLog);
    this.deadline = this.startedAt + request.timeoutMs;
    this.result = new Promise((resolve) => {
      this.resolveResult = resolve;
    });
    this.deadlineTimer = setTimeout(() => this.timeOut(), request.timeoutMs);
    void this.start();
  }

  /** End the execution now with `code` (used by destroy()). */
  abort(code: SandboxCode, message: string): void {
    this.finish({ ok: false, error: new SandboxError(code, message).message, code });
  }

  private remaining(): number {
    return Math.max(0, Math.floor(this.deadline - performance.now()));
  }

  private async start(): Promise<void> {
    const { bootstrap } = this.slot;
    const payload: GuestPayload = {
      host: this.factory.createCallback(this.onGuestCall),
      code: this.request.code,
      maxOutputSize: this.request.maxOutputSize,
      maxTimers: this.request.maxTimers,
      maxTimerCreations: this.request.maxTimerCreations,
      maxLogLines: this.request.maxLogLines,
      maxResultBytes: this.slot.memoryLimitMiB * 1024 * 1024,
      modules: this.request.modules,
      context: this.request.context,
    };
    this.inFlight++;
    try {
      const fresh = this.slot.takeContext();
      const context = fresh instanceof Promise ? await fresh : fresh;
      if (this.settled) {
        context.release();
        return;
      }
      this.context = context;
      try {
        context.global.setSync(PAYLOAD_GLOBAL, payload, { copy: true });
      } catch (error) {
        this.inFlight--;
        if (this.slot.healthy) {
          this.finish(failure(SANDBOX_CODES.ENGINE_FAILED, contextCopyMessage(error)));
        } else this.fail(error);
        return;
      }
      const timeout = this.remaining();
      if (timeout <= 0) throw new Error("Script execution timed out.");
      this.fire = await bootstrap.run(context, { timeout, reference: true });
    } catch (error) {
      this.inFlight--;
      this.fail(error);
      return;
    }
    this.inFlight--;
    for (const id of this.due.splice(0)) this.fireTimer(id);
    this.checkQuiescent();
  }

  /**
   * The one host function the guest can call (through the bootstrap's
   * closure), queued on the event loop in call order. Arguments are copies
   * of guest data, so only their types are checked. Never throws: host
   * errors carry host stack frames and paths.
   */
  private readonly onGuestCall = (op: unknown, a: unknown, b: unknown, c: unknown): void => {
    try {
      if (this.settled) return;
      if (op === "l") {
        if (typeof a === "string" && LEVELS.has(a) && typeof b === "string") this.pushLog(a as LogLevel, b);
      } else if (op === "L") {
        this.capLines();
      } else if (op === "t") {
        if (typeof a === "number" && typeof b === "number" && typeof c === "boolean") this.armTimer(a, b, c);
      } else if (op === "c") {
        if (typeof a === "number") this.clearTimer(a);
      } else if (op === "d") {
        this.onOutcome(a, b, c);
        this.checkQuiescent();
      }
    } catch {
      // Nothing to report to: the guest does not wait for this call.
    }
  };

  private onOutcome(ok: unknown, value: unknown, kind: unknown): void {
    if (this.outcome !== undefined && !this.outcome.ok) return;
    if (ok === true && containsSharedMemory(value)) {
      this.outcome = {
        ok: false,
        error: "result is not transferable: SharedArrayBuffer",
        code: SANDBOX_CODES.ENGINE_FAILED,
      };
    } else if (ok === true) {
      this.outcome = { ok: true, value };
    } else {
      const text = typeof value === "string" ? value : "the sandboxed code failed";
      this.outcome = { ok: false, error: text, code: SANDBOX_CODES.ENGINE_FAILED };
      this.syntaxCandidate = kind === "syntax";
    }
  }

  private pushLog(level: LogLevel, message: string): void {
    // The guest enforces both caps; the host repeats them in case it did not.
    if (this.logLines >= this.request.maxLogLines) {
      this.capLines();
      return;
    }
    this.logLines++;
    this.logs.push(level, message);
  }

  /** Too many lines: end the output with a sentinel like the byte cap's. */
  private capLines(): void {
    if (this.logs.truncated || this.logLines > this.request.maxLogLines) return;
    this.logLines = this.request.maxLogLines + 1;
    const entry: LogEntry = {
      level: "warn",
      message: `[output truncated at ${this.request.maxLogLines} lines]`,
    };
    this.logs.entries.push(entry);
    this.emitLog?.(entry);
  }

  private armTimer(id: number, delay: number, repeat: boolean): void {
    if (this.timers.has(id) || this.timers.size >= this.request.maxTimers) return;
    if (this.timersCreated >= this.request.maxTimerCreations) return;
    this.timersCreated++;
    const ms = Number.isFinite(delay) ? Math.min(Math.max(1, Math.floor(delay)), MAX_DELAY_MS) : 1;
    const timer: HostTimer = { repeat, delay: ms, handle: undefined };
    timer.handle = setTimeout(() => this.fireTimer(id), ms);
    this.timers.set(id, timer);
  }

  private clearTimer(id: number): void {
    const timer = this.timers.get(id);
    if (timer === undefined) return;
    clearTimeout(timer.handle);
    this.timers.delete(id);
  }

  private fireTimer(id: number): void {
    const timer = this.timers.get(id);
    if (timer === undefined || this.settled) return;
    const fire = this.fire;
    if (fire === undefined) {
      // Due while the bootstrap is still running: fire once it returned.
      timer.handle = undefined;
      this.due.push(id);
      return;
    }
    timer.handle = undefined;
    if (!timer.repeat) this.timers.delete(id);
    const timeout = this.remaining();
    if (timeout <= 0) return; // the deadline timer ends the execution
    this.inFlight++;
    fire.apply(undefined, [id], { timeout }).then(
      () => {
        this.inFlight--;
        if (this.settled) return;
        if (timer.repeat && this.timers.get(id) === timer) {
          timer.handle = setTimeout(() => this.fireTimer(id), timer.delay);
        }
        this.checkQuiescent();
      },
      (error: unknown) => {
        this.inFlight--;
        this.fail(error);
      },
    );
  }

  private checkQuiescent(): void {
    if (this.settled || this.inFlight > 0 || this.outcome === undefined) return;
    if (!this.outcome.ok || this.timers.size === 0) this.finish(this.outcome);
  }

  private timeOut(): void {
    this.deadlineTimer = undefined;
    this.finish(
      failure(
        SANDBOX_CODES.TIMEOUT,
        `Execution timed out after ${this.request.timeoutMs} ms (sync code, promises and timers share this budget)`,
      ),
    );
  }

  /** Classify an error thrown by an isolate call. */
  private fail(error: unknown): void {
    if (this.settled) return;
    const message = error instanceof Error ? error.message : String(error);
    if (!this.slot.healthy && /memory limit/i.test(message)) {
      this.finish(
        failure(
          SANDBOX_CODES.MEMORY_EXCEEDED,
          `Execution exceeded the isolate memory limit of ${this.slot.memoryLimitMiB} MiB; the isolate was disposed and will be replaced`,
        ),
      );
    } else if (/timed out/i.test(message)) {
      this.finish(
        failure(
          SANDBOX_CODES.TIMEOUT,
          `Execution timed out after ${this.request.timeoutMs} ms (sync code, promises and timers share this budget)`,
        ),
      );
    } else {
      this.finish(failure(SANDBOX_CODES.ENGINE_FAILED, `The isolate failed: ${message}`));
    }
  }

  private finish(settledOutcome: Outcome): void {
    let outcome = settledOutcome;
    if (this.settled) return;
    this.settled = true;
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    for (const timer of this.timers.values()) clearTimeout(timer.handle);
    this.timers.clear();
    this.due.length = 0;
    const busy = this.inFlight > 0;
    if (busy || !this.slot.healthy) {
      // Something may still be running in the isolate: dispose it so nothing does.
      this.slot.dispose();
    } else {
      this.release();
      if (!outcome.ok && this.syntaxCandidate)
        outcome = { ...outcome, error: this.locateSyntaxError(outcome.error) };
      this.reusable = this.slot.healthy;
    }
    const result: SandboxResult = {
      success: outcome.ok,
      duration: performance.now() - this.startedAt,
      logs: this.logs.entries,
    };
    if (outcome.ok) {
      result.result = outcome.value;
    } else {
      result.error = outcome.error;
      if (outcome.code !== undefined) result.errorCode = outcome.code;
    }
    this.resolveResult(result);
  }

  /**
   * Eval reports no position for a parse error, so compile the code once
   * more (error path only) to name the line; a runtime SyntaxError (from
   * `JSON.parse`, say) compiles fine and keeps its message.
   */
  private locateSyntaxError(message: string): string {
    try {
      this.slot.isolate.compileScriptSync(this.request.code, { filename: "sandbox.js" }).release();
      return message;
    } catch (error) {
      const text = error instanceof Error ? error.message : "";
      const at = /^(.*) \[sandbox\.js:(\d+):(\d+)\]$/s.exec(text);
      if (at === null) return message;
      return `SyntaxError: ${at[1]} (line ${at[2]}, column ${at[3]})`;
    }
  }

  private release(): void {
    try {
      this.fire?.release();
      this.context?.release();
    } catch {
      // The isolate went away under us; nothing left to release.
    }
    this.fire = undefined;
    this.context = undefined;
  }
}

function failure(code: SandboxCode, message: string): Outcome {
  return { ok: false, error: new SandboxError(code, message).message, code };
}

function contextCopyMessage(error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `context is not transferable into the isolate (values must be structured-cloneable data): ${reason}`;
}
