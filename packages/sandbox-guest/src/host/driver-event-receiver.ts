import type { HostCalls, LogEntry } from "@suaveplan/sandbox-core/types";
import { type CallReply, type DriverEvent, type GuestOutcome, LOG_LEVELS } from "../protocol/protocol.js";
import { answerCall } from "./answer-call.js";

const LEVELS: ReadonlySet<string> = new Set(LOG_LEVELS);

/** What the realm's side reported with its `done`: its own measurements and counts. */
export interface DriverReport {
  memoryUsed: number | undefined;
  cpuMs: number | undefined;
  toolCalls: number;
  toolBytes: number;
}

/** Hooks of a {@link DriverEventReceiver}. */
export interface DriverEventReceiverHooks {
  /** Each valid console line as it arrives; a throw is ignored. */
  onLog?: ((entry: LogEntry) => void) | undefined;
  /** Answers forwarded calls; without it calls are ignored (the realm then never forwards one). */
  hostCalls?: HostCalls | undefined;
  /** Post a call's reply to the realm's side (not called once the run ended). */
  sendReply(reply: CallReply): void;
  /** True once the run ended: late events and replies are dropped. */
  ended(): boolean;
  /** The realm's side reported its outcome. */
  onDone(outcome: GuestOutcome, report: DriverReport): void;
}

/**
 * The application's half of a transport whose driver runs on the other side
 * (the worker engine's thread, the isolate engine's helper process): reads the
 * {@link DriverEvent}s it receives — keeps the console lines and hands each to
 * `onLog`, answers each `call` with {@link answerCall} and posts the reply,
 * passes the `done` outcome on — and counts the calls and their bytes as the
 * application saw them, for an end without the other side's report. Events
 * that are malformed (the other side is not trusted to be well-formed) are
 * ignored.
 */
export class DriverEventReceiver {
  /** The console lines received so far (cut to the output budget by the driver). */
  readonly logs: LogEntry[] = [];
  private calls = 0;
  private bytes = 0;

  constructor(private readonly hooks: DriverEventReceiverHooks) {}

  /** Handle one event from the realm's side. */
  receive(event: DriverEvent): void {
    if (this.hooks.ended()) return;
    if (event?.type === "log") {
      if (!LEVELS.has(event.level) || typeof event.message !== "string") return;
      const entry: LogEntry = { level: event.level, message: event.message };
      this.logs.push(entry);
      try {
        this.hooks.onLog?.(entry);
      } catch {
        // A throwing onLog must not break the execution; its errors are ignored.
      }
    } else if (event?.type === "call") {
      this.answer(event.call);
    } else if (event?.type === "done" && typeof event.outcome?.kind === "string") {
      this.hooks.onDone(event.outcome, {
        memoryUsed: numberOr(event.memoryUsed, undefined),
        cpuMs: numberOr(event.cpuMs, undefined),
        toolCalls: numberOr(event.toolCalls, this.calls),
        toolBytes: numberOr(event.toolBytes, this.bytes),
      });
    }
  }

  /** What the application saw, for a run that ended without the other side's report. */
  seen(): DriverReport {
    return { memoryUsed: undefined, cpuMs: undefined, toolCalls: this.calls, toolBytes: this.bytes };
  }

  private answer(call: unknown): void {
    const { hostCalls } = this.hooks;
    const { id, name, text } = (call ?? {}) as { id?: unknown; name?: unknown; text?: unknown };
    if (
      hostCalls === undefined ||
      typeof id !== "number" ||
      typeof name !== "string" ||
      typeof text !== "string"
    )
      return;
    this.calls++;
    this.bytes += text.length * 2;
    void answerCall({ id, name, text }, hostCalls).then((reply) => {
      if (this.hooks.ended()) return;
      this.bytes += reply.text.length * 2;
      this.hooks.sendReply(reply);
    });
  }
}

function numberOr<T>(value: unknown, fallback: T): number | T {
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}
