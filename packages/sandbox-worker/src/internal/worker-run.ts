import type { HostCalls, LogEntry } from "@suaveplan/sandbox-core/types";
import { watchWorkerMemory } from "@suaveplan/sandbox-core/worker-memory";
import {
  type CallReply,
  type DriverEvent,
  DriverEventReceiver,
  type ExecutionRequest,
  type GuestOutcome,
} from "@suaveplan/sandbox-guest";
import { type HostMessage, replyMessage } from "./worker-message.js";
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
  /** The time the guest's code ran in its realm, in ms, as the worker's driver measured it. */
  cpuMs: number | undefined;
  /**
   * Guest→host calls and the bytes of their payloads both ways (codec text × 2):
   * the driver's count when the worker reported, else what the host saw.
   */
  toolCalls: number;
  toolBytes: number;
}

/**
 * One execution on one worker: the transport half of the engine. Posts the
 * request once the worker is ready, collects the streamed `log` events
 * (handing each to `onLog` as it arrives, through the shared
 * `DriverEventReceiver`), and ends with the worker's `done`
 * outcome — or with what the host knows: the worker ran out of memory
 * (`memory`), did not boot within `startupTimeoutMs` or died (`fault`), did
 * not report by the deadline plus {@link BACKSTOP_GRACE_MS} (`timeout`), or
 * was {@link abort}ed (cancelled, engine destroyed). With `hostCalls`, each
 * `call` the worker forwards is answered with `answerCall` and its `reply`
 * posted back; without, calls are ignored (the entry never forwards one
 * then). `onEnd` runs synchronously when the run ends — `reported` is true
 * when the worker sent its own `done` — and the engine terminates the worker
 * there, or keeps it for the next run (`reuse`); a reply still in flight is
 * dropped, by the driver or, on a reused worker, by its run number.
 */
export class WorkerRun implements ThreadListener {
  /** Resolves once the run ended; never rejects. */
  readonly result: Promise<RunEnd>;
  private readonly events: DriverEventReceiver;
  private timer: NodeJS.Timeout | undefined;
  private stopMemoryWatch: () => void = () => {};
  private finished = false;
  private resolveResult!: (end: RunEnd) => void;
  /** This run's number on its worker, once sent. */
  private number = 0;

  constructor(
    private readonly thread: WorkerThread,
    private readonly request: ExecutionRequest,
    onLog: ((entry: LogEntry) => void) | undefined,
    private readonly onEnd: (thread: WorkerThread, reported: boolean, outcome: GuestOutcome) => void,
    startupTimeoutMs: number,
    hostCalls?: HostCalls | undefined,
    private readonly reuse = false,
  ) {
    this.result = new Promise((resolve) => {
      this.resolveResult = resolve;
    });
    this.events = new DriverEventReceiver({
      onLog,
      hostCalls,
      sendReply: (reply) => this.reply(reply),
      ended: () => this.finished,
      onDone: (outcome, report) => this.end(outcome, report),
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

  /** End the run now with `outcome` (cancelled, the engine was destroyed…). */
  abort(outcome: GuestOutcome): void {
    this.end(outcome);
  }

  onReady(): void {
    if (!this.finished && this.number === 0) this.send();
  }

  onEvent(event: DriverEvent): void {
    this.events.receive(event);
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

  private reply(reply: CallReply): void {
    try {
      this.thread.worker.postMessage(replyMessage(this.number, reply) satisfies HostMessage);
    } catch {
      // The worker is going away; its run ends through its exit or the backstop.
    }
  }

  private send(): void {
    clearTimeout(this.timer);
    this.thread.ready = false;
    this.number = ++this.thread.runs;
    try {
      this.thread.worker.postMessage({
        type: "run",
        run: this.number,
        request: this.request,
        memoryLimit: this.thread.memoryLimit,
        reuse: this.reuse,
      } satisfies HostMessage);
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
    const limitBytes = this.thread.memoryLimit;
    this.stopMemoryWatch = watchWorkerMemory(this.thread.worker, limitBytes, () =>
      this.end({ kind: "memory", limitBytes }),
    );
  }

  private end(outcome: GuestOutcome, report?: Omit<RunEnd, "outcome" | "logs">): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.stopMemoryWatch();
    // A reused worker's entry takes its next run as soon as it reported `done` (see worker-entry.ts).
    if (this.reuse && report !== undefined) this.thread.ready = true;
    this.onEnd(this.thread, report !== undefined, outcome);
    this.resolveResult({ outcome, logs: this.events.logs, ...(report ?? this.events.seen()) });
  }
}

function fault(message: string): GuestOutcome {
  return { kind: "fault", message: `WorkerEngine: ${message}` };
}
