import type { LogEntry } from "@suaveplan/sandbox-core/types";
import {
  type DriverEvent,
  type ExecutionRequest,
  type GuestOutcome,
  LOG_LEVELS,
} from "@suaveplan/sandbox-guest";
import type { ThreadListener, WorkerThread } from "./worker-thread.js";

/**
 * How long after its deadline the host waits for the worker's own report
 * before terminating it as timed out, in ms. The driver inside the worker
 * enforces the deadline itself; this backstop covers a worker that cannot
 * report (blocked, or too slow to post under load).
 */
export const BACKSTOP_GRACE_MS = 250;

/** How a run ended, as the host saw it. */
export interface RunEnd {
  outcome: GuestOutcome;
  /** The log events the worker streamed (already cut to the output budget by the driver). */
  logs: LogEntry[];
  memoryUsed: number | undefined;
}

const LEVELS: ReadonlySet<string> = new Set(LOG_LEVELS);

/**
 * One execution on one worker: the transport half of the engine. Posts the
 * request once the worker is ready, collects the streamed `log` events
 * (handing each to `onLog` as it arrives), and ends with the worker's `done`
 * outcome — or with what the host knows: the worker ran out of memory
 * (`memory`), did not boot within `startupTimeoutMs` or died (`fault`), did
 * not report by the deadline plus {@link BACKSTOP_GRACE_MS} (`timeout`), or
 * was {@link abort}ed. `onEnd` runs synchronously when the run ends; the
 * engine terminates the worker there.
 */
export class WorkerRun implements ThreadListener {
  /** Resolves once the run ended; never rejects. */
  readonly result: Promise<RunEnd>;
  private readonly logs: LogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private finished = false;
  private resolveResult!: (end: RunEnd) => void;

  constructor(
    private readonly thread: WorkerThread,
    private readonly request: ExecutionRequest,
    private readonly onLog: ((entry: LogEntry) => void) | undefined,
    private readonly onEnd: (thread: WorkerThread) => void,
    startupTimeoutMs: number,
  ) {
    this.result = new Promise((resolve) => {
      this.resolveResult = resolve;
    });
    thread.listener = this;
    if (thread.exited) {
      this.onExit(undefined);
    } else if (thread.ready) {
      this.send();
    } else {
      this.timer = setTimeout(
        () =>
          this.end(
            fault(`the worker did not start within ${startupTimeoutMs} ms; the host may be overloaded`),
          ),
        startupTimeoutMs,
      );
    }
  }

  /** End the run now with `outcome` (the engine was destroyed…). */
  abort(outcome: GuestOutcome): void {
    this.end(outcome);
  }

  onReady(): void {
    if (!this.finished) this.send();
  }

  onEvent(event: DriverEvent): void {
    if (this.finished) return;
    if (event?.type === "log") {
      if (!LEVELS.has(event.level) || typeof event.message !== "string") return;
      const entry: LogEntry = { level: event.level, message: event.message };
      this.logs.push(entry);
      try {
        this.onLog?.(entry);
      } catch {
        // A throwing onLog must not break the execution; its errors are ignored.
      }
    } else if (event?.type === "done" && typeof event.outcome?.kind === "string") {
      this.end(event.outcome, typeof event.memoryUsed === "number" ? event.memoryUsed : undefined);
    }
  }

  onError(error: Error): void {
    if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") {
      this.end({ kind: "memory", limitBytes: this.thread.memoryLimit });
      return;
    }
    this.end(fault(`the worker thread failed: ${error instanceof Error ? error.message : String(error)}`));
  }

  onExit(exitCode: number | undefined): void {
    this.end(
      fault(
        `the worker thread exited${exitCode === undefined ? "" : ` with code ${exitCode}`} before it returned a result`,
      ),
    );
  }

  private send(): void {
    clearTimeout(this.timer);
    try {
      this.thread.worker.postMessage(this.request);
    } catch (error) {
      this.end(
        fault(
          `the request could not be sent to the worker: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
      return;
    }
    const { timeoutMs } = this.request;
    this.timer = setTimeout(() => this.end({ kind: "timeout", timeoutMs }), timeoutMs + BACKSTOP_GRACE_MS);
  }

  private end(outcome: GuestOutcome, memoryUsed?: number): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.onEnd(this.thread);
    this.resolveResult({ outcome, logs: this.logs, memoryUsed });
  }
}

function fault(message: string): GuestOutcome {
  return { kind: "fault", message: `WorkerEngine: ${message}` };
}
