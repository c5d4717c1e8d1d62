import { getHeapStatistics } from "node:v8";
import { type Context, createContext, type Script } from "node:vm";
import { SANDBOX_CODES, type SandboxCode } from "@suaveplan/sandbox-core/error-codes";
import { LogCollector } from "@suaveplan/sandbox-core/resource-limiter";
import type { LogEntry, LogLevel, SandboxResult } from "@suaveplan/sandbox-core/types";
import {
  DONE,
  failScript,
  fireScript,
  MAX_PENDING_TIMERS,
  runtimeScript,
  settleScript,
} from "./guest-runtime.js";
import { isHostError, isHostTimeout } from "./host-guards.js";

/** Everything one execution needs, prepared by the engine. */
export interface ExecutionPlan {
  /** The compiled user code. */
  script: Script;
  /** JSON of the context object, or "" when empty. */
  contextJson: string;
  /** JSON of `[[name, exports], …]` for data modules, or "" when none. */
  modulesJson: string;
  /**
   * Run the user code under node's timeout watchdog. False only for a
   * provably bounded pure expression (no calls, loops or functions).
   */
  watchdog: boolean;
  /** Compiled source modules, evaluated in order before the user code. */
  sourceModules: readonly Script[];
  /** Wall-clock limit, in ms. */
  timeoutMs: number;
  /** Console budget, in bytes. */
  maxOutputSize: number;
  /** Streaming callback. */
  onLog: ((entry: LogEntry) => void) | undefined;
}

const CONTEXT_OPTIONS = Object.freeze({
  codeGeneration: Object.freeze({ strings: false, wasm: false }),
  microtaskMode: "afterEvaluate" as const,
});

const LEVELS: ReadonlySet<string> = new Set(["log", "info", "warn", "error", "debug"]);
const { apply } = Reflect;
const { create } = Object;
const MAX_TIMER_MS = 2_147_483_647;

/** A failure result whose text ends with its code. */
export function failure(
  code: SandboxCode,
  text: string,
  extra: Partial<SandboxResult> = {},
): SandboxResult & { success: false } {
  return { duration: 0, logs: [], ...extra, success: false, error: `${text} (${code})`, errorCode: code };
}

type Outcome =
  | { kind: typeof DONE.VALUE; json: string }
  | { kind: typeof DONE.UNDEFINED }
  | { kind: typeof DONE.NOT_TRANSFERABLE; what: string }
  | { kind: typeof DONE.ERROR; text: string }
  | { kind: "primitive"; value: string | number | boolean | null };

/** How much earlier than asked node's vm watchdog may fire by our clock, in ms. */
const WATCHDOG_SLACK_MS = 5;

/**
 * One run of guest code in a fresh `node:vm` context. Every entry into the
 * context (user code, settling the result, a timer firing) is a
 * `runInContext` bounded by the time left; with `microtaskMode:
 * "afterEvaluate"` each entry also drains the context's own microtask queue
 * inside that bound, which is how promise loops are stopped and how guest
 * promises make progress at all. Timers are host timers owned by this
 * execution and all cleared when it ends.
 */
export class VmExecution {
  private context: Context | undefined;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private readonly due: number[] = [];
  private deadlineTimer: NodeJS.Timeout | undefined;
  private outcome: Outcome | undefined;
  private handed: unknown;
  private finished = false;
  private readonly collector: LogCollector;
  private readonly started = performance.now();
  private readonly deadline: number;
  private readonly heapBefore = getHeapStatistics().used_heap_size;
  private settle!: (result: SandboxResult) => void;
  /** Resolves with the result; never rejects. */
  readonly result: Promise<SandboxResult>;

  constructor(
    private readonly plan: ExecutionPlan,
    private readonly onEnd: (execution: VmExecution) => void,
  ) {
    this.deadline = this.started + plan.timeoutMs;
    const onLog = plan.onLog;
    this.collector = new LogCollector(
      plan.maxOutputSize,
      onLog === undefined
        ? undefined
        : (entry) => {
            try {
              onLog(entry);
            } catch {
              // A throwing host callback must never reach the guest.
            }
          },
    );
    this.result = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /** The host side of the guest runtime: primitives in, primitives out, never throws. */
  private readonly hostApi = Object.freeze({
    log: (level: unknown, message: unknown): boolean => {
      if (this.finished) return false;
      if (typeof level === "string" && LEVELS.has(level) && typeof message === "string") {
        this.collector.push(level as LogLevel, message);
      }
      return !this.collector.truncated;
    },
    timer: (id: unknown, ms: unknown, repeat: unknown): boolean => {
      if (this.finished || typeof id !== "number" || typeof ms !== "number" || this.timers.has(id))
        return false;
      if (this.timers.size >= MAX_PENDING_TIMERS) return false;
      const delay = Math.min(Math.max(1, ms), MAX_TIMER_MS);
      const handle =
        repeat === true
          ? setInterval(() => this.onTimer(id, true), delay)
          : setTimeout(() => this.onTimer(id, false), delay);
      this.timers.set(id, handle);
      return true;
    },
    clear: (id: unknown): void => {
      if (typeof id !== "number") return;
      const handle = this.timers.get(id);
      if (handle === undefined) return;
      clearTimeout(handle);
      this.timers.delete(id);
    },
    next: (): number => this.due.shift() ?? 0,
    take: (): unknown => {
      const value = this.handed;
      this.handed = undefined;
      return value;
    },
    done: (kind: unknown, payload: unknown): void => {
      if (typeof payload !== "string") return;
      // A later uncaught error (e.g. in a timer) overrides an earlier value.
      if (this.outcome !== undefined && (kind !== DONE.ERROR || this.outcome.kind === DONE.ERROR)) return;
      if (kind === DONE.VALUE) this.outcome = { kind, json: payload };
      else if (kind === DONE.UNDEFINED) this.outcome = { kind };
      else if (kind === DONE.NOT_TRANSFERABLE) this.outcome = { kind, what: payload };
      else if (kind === DONE.ERROR) this.outcome = { kind, text: payload };
    },
  });

  /** Run to completion (or timeout); resolves {@link result}. */
  start(): Promise<SandboxResult> {
    const context = createContext(create(null), CONTEXT_OPTIONS);
    this.context = context;
    const install = runtimeScript.runInContext(context) as (...args: unknown[]) => void;
    apply(install, undefined, [this.hostApi, this.plan.contextJson, this.plan.modulesJson]);
    for (const moduleScript of this.plan.sourceModules) {
      if (!this.enter(moduleScript) || this.outcome !== undefined) {
        this.check();
        return this.result;
      }
    }
    const remaining = this.remaining();
    let value: unknown;
    try {
      value = this.plan.watchdog
        ? this.plan.script.runInContext(context, { timeout: remaining, displayErrors: false })
        : this.plan.script.runInContext(context, { displayErrors: false });
    } catch (thrown) {
      this.onThrow(thrown);
      if (!this.finished) this.armDeadline();
      return this.result;
    }
    const type = typeof value;
    if (value === null || type === "string" || type === "boolean") {
      this.outcome = { kind: "primitive", value: value as string | boolean | null };
    } else if (type === "number") {
      this.outcome = { kind: "primitive", value: Number.isFinite(value) ? (value as number) : null };
    } else if (type === "undefined") {
      this.outcome = { kind: DONE.UNDEFINED };
    } else if (type === "symbol" || type === "bigint") {
      this.outcome = { kind: DONE.NOT_TRANSFERABLE, what: type };
    } else {
      // An object, function or thenable: only guest code may look at it.
      this.handed = value;
      this.enter(settleScript);
    }
    this.check();
    if (!this.finished) this.armDeadline();
    return this.result;
  }

  /** End the execution early (engine destroyed). */
  abort(code: SandboxCode, text: string): void {
    this.finish(failure(code, text));
  }

  private remaining(): number {
    return Math.max(1, Math.ceil(this.deadline - performance.now()));
  }

  private armDeadline(): void {
    const left = this.deadline - performance.now();
    if (left <= 0) {
      this.timedOut();
      return;
    }
    this.deadlineTimer = setTimeout(() => this.timedOut(), Math.ceil(left));
  }

  private timedOut(): void {
    this.finish(failure(SANDBOX_CODES.TIMEOUT, `Script execution timed out after ${this.plan.timeoutMs} ms`));
  }

  /** Run one of our scripts in the context within the time left; false when the execution ended. */
  private enter(script: Script): boolean {
    const context = this.context;
    if (this.finished || context === undefined) return false;
    if (this.deadline - performance.now() <= 0) {
      this.timedOut();
      return false;
    }
    try {
      script.runInContext(context, { timeout: this.remaining(), displayErrors: false });
      return !this.finished;
    } catch (thrown) {
      this.onThrow(thrown);
      return false;
    }
  }

  private onThrow(thrown: unknown): void {
    // node:vm creates its timeout error in the guest realm, so a throw once the
    // budget is spent (give or take the watchdog's early firing) is the timeout.
    if (isHostTimeout(thrown) || performance.now() >= this.deadline - WATCHDOG_SLACK_MS) {
      this.timedOut();
      return;
    }
    if (isHostError(thrown)) {
      // Only our own scripts and node itself throw host errors; report without host frames.
      this.finish(failure(SANDBOX_CODES.ENGINE_FAILED, `${thrown.name}: ${thrown.message}`));
      return;
    }
    // A value the guest threw: only guest code may describe it.
    this.handed = thrown;
    if (this.outcome === undefined) this.enter(failScript);
    this.check();
  }

  private onTimer(id: number, repeat: boolean): void {
    if (this.finished) return;
    if (!repeat) this.timers.delete(id);
    this.due.push(id);
    this.enter(fireScript);
    this.check();
  }

  /** Finish when the outcome is known and nothing can run any more. */
  private check(): void {
    if (this.finished) return;
    const outcome = this.outcome;
    if (outcome === undefined) return;
    switch (outcome.kind) {
      case DONE.ERROR:
        this.finish(failure(SANDBOX_CODES.ENGINE_FAILED, outcome.text));
        return;
      case DONE.NOT_TRANSFERABLE:
        this.finish(
          failure(
            SANDBOX_CODES.ENGINE_FAILED,
            `result is not transferable: ${outcome.what}; return JSON-compatible data instead`,
          ),
        );
        return;
    }
    // A pending timer keeps the execution alive until it fires or the deadline ends it.
    if (this.timers.size > 0) return;
    let value: unknown;
    if (outcome.kind === "primitive") value = outcome.value;
    else if (outcome.kind === DONE.VALUE) value = JSON.parse(outcome.json);
    this.finish({ success: true, result: value, duration: 0, logs: [] });
  }

  private finish(result: SandboxResult): void {
    if (this.finished) return;
    this.finished = true;
    for (const handle of this.timers.values()) clearTimeout(handle);
    this.timers.clear();
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.context = undefined;
    this.handed = undefined;
    this.due.length = 0;
    const memoryUsed = Math.max(0, getHeapStatistics().used_heap_size - this.heapBefore);
    const final: SandboxResult = {
      ...result,
      duration: performance.now() - this.started,
      logs: this.collector.entries,
      memoryUsed,
    };
    if (!final.success) delete final.result;
    this.onEnd(this);
    this.settle(final);
  }
}
