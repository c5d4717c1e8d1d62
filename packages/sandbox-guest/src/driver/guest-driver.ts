import { LogCollector } from "@suaveplan/sandbox-core/resource-limiter";
import { type LogEntry, type LogLevel, MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import type { ErrorRecord, KernelBridge } from "@suaveplan/sandbox-kernel";
import type { CallReply, GuestCall, GuestOutcome } from "../protocol/protocol.js";
import { LOG_LEVELS } from "../protocol/protocol.js";

/**
 * A console line stops listing entries past about `maxOutputSize × this` characters (the kernel's
 * `format` budget), so one `console.log` of a huge object cannot spend the execution's time and
 * memory on text the output budget would cut anyway. `format` counts nested entries at every
 * level (an overcount, up to about 6× at `%o`'s depth 4), so a line that fits `maxOutputSize`
 * whole is never shortened.
 */
const LOG_FORMAT_OVERCOUNT = 8;

/** How one entry into the realm went. Anything but `ok` ends the execution with `outcome`. */
export type RealmStatus = { ok: true } | { ok: false; outcome: GuestOutcome };

/** A registered source module: compiled by the realm, evaluated by the kernel before the code. */
export interface SourceModule {
  /** The global name its `module.exports` is published under. */
  name: string;
  /** CommonJS-style source assigning `module.exports`. */
  source: string;
}

/**
 * One guest realm with the kernel installed — the only part that differs
 * between engines on the realm's side (`node:vm` for vm, worker and spawn;
 * isolated-vm for isolate). Every entry is bounded by `timeoutMs` and reports
 * a timeout, a memory failure or a fault as a {@link RealmStatus}, never by
 * throwing. Entries may be synchronous or asynchronous; the driver runs one
 * at a time.
 */
export interface GuestRealm {
  /** Set the limits, the context globals and data modules (codec text), and run the source modules. */
  boot(
    runConfigJson: string,
    contextText: string,
    modulesText: string,
    sourceModules: readonly SourceModule[],
    timeoutMs: number,
  ): RealmStatus | Promise<RealmStatus>;
  /** Compile and run the guest code, handing its completion value (or what it threw) to the kernel. */
  main(timeoutMs: number): RealmStatus | Promise<RealmStatus>;
  /** Call a kernel entry (`fire`, `reply`) with primitive arguments. */
  enter(
    name: "fire" | "reply",
    args: readonly (string | number | boolean)[],
    timeoutMs: number,
  ): RealmStatus | Promise<RealmStatus>;
  /** Wait for what the platform reports after a task (unhandled rejections), before the outcome is final; absent: nothing to wait for. */
  quiesce?: (() => Promise<void>) | undefined;
  /** Heap bytes attributed to the execution so far, when the realm can tell. */
  memoryUsed?(): number | undefined;
  /** CPU time the guest used so far, in ms, when the realm can measure it. */
  cpuUsed?(): number | undefined;
  /** Release the realm; idempotent. */
  dispose(): void;
}

/** Per-execution limits and hooks of a {@link GuestDriver}. */
export interface DriverPlan {
  /** Wall-clock budget shared by sync code, promises, timers and host calls, in ms. */
  timeoutMs: number;
  /** Console budget, in bytes. */
  maxOutputSize: number;
  /** Console lines allowed in total. */
  maxLogLines: number;
  /** Pending timers allowed at once. */
  maxTimers: number;
  /** Timers allowed to be created in total. */
  maxTimerCreations: number;
  /** Largest result, in bytes (codec text × 2). */
  maxResultBytes: number;
  /** Largest payload of one guest→host call, in bytes. */
  maxCallBytes: number;
  /** Names of the host functions the guest may call as `tools.<name>(input)`. */
  tools?: readonly string[] | undefined;
  /** How preparing moved positions in the guest code (top-level await wrapper). */
  shift?: { insertions: Array<[line: number, column: number, length: number]> } | undefined;
  /** Context globals as codec text of an object, or "". */
  contextText: string;
  /** Data modules as JSON of `[[name, codecText], …]`, or "". */
  modulesText: string;
  /** Source modules, in registration order. */
  sourceModules: readonly SourceModule[];
  /** Called with each console line as the guest writes it (never throws into the guest). */
  onLog?: ((entry: LogEntry) => void) | undefined;
  /**
   * Called for each guest→host call; answer with {@link GuestDriver.reply}.
   * Without it every call is refused. Returning a string refuses the call with that message.
   */
  onCall?: ((call: GuestCall) => string | undefined) | undefined;
}

/** What a driver resolves with. */
export interface DriverResult {
  outcome: GuestOutcome;
  /** The console lines kept under the budget. */
  logs: LogEntry[];
  /** Wall-clock duration, in ms. */
  duration: number;
  memoryUsed: number | undefined;
  /** CPU time the realm measured, in ms. */
  cpuMs: number | undefined;
  /** Guest→host calls accepted, and the bytes of their payloads both ways (codec text × 2). */
  toolCalls: number;
  toolBytes: number;
}

const LEVELS: ReadonlySet<string> = new Set(LOG_LEVELS);

/**
 * The host half of the guest runtime, written once for every engine: the
 * timer table and due queue, the deadline, log collection under the budget,
 * guest→host calls with replies, and the choice of the outcome. It runs next
 * to the realm — in the application for vm and isolate, inside the worker or
 * child for worker and spawn — and talks to the kernel only through the
 * primitive bridge and the realm's entries.
 *
 * The outcome: the first report wins, except that an error reported later
 * while the run is still alive (an uncaught error in a timer, an unhandled
 * rejection) wins over a value. A run ends when its outcome is known and no
 * timer or host call is pending, or at the deadline, or on {@link abort}.
 */
export class GuestDriver {
  private realm: GuestRealm | undefined;
  private readonly collector: LogCollector;
  private logLines = 0;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  private timersCreated = 0;
  private readonly due: number[] = [];
  /** One-shot timers that fired on the host and wait for their callback to run in the realm. */
  private readonly oneShotDue = new Set<number>();
  private readonly calls = new Set<number>();
  private toolCalls = 0;
  private toolBytes = 0;
  private readonly replies: CallReply[] = [];
  private reported: GuestOutcome | undefined;
  private ended: GuestOutcome | undefined;
  private finished = false;
  private busy = false;
  private booted = false;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private readonly startedAt = performance.now();
  private resolveResult!: (result: DriverResult) => void;
  /** Resolves once the execution ended and the realm was released; never rejects. */
  readonly result: Promise<DriverResult>;

  constructor(
    private readonly plan: DriverPlan,
    createRealm: (bridge: KernelBridge) => GuestRealm,
  ) {
    const { onLog } = plan;
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
      this.resolveResult = resolve;
    });
    this.deadlineTimer = setTimeout(
      () => this.end({ kind: "timeout", timeoutMs: plan.timeoutMs }),
      plan.timeoutMs,
    );
    try {
      this.realm = createRealm(this.bridge);
    } catch (error) {
      this.end({ kind: "fault", message: `The guest realm could not be created: ${messageOf(error)}` });
      return;
    }
    void this.run();
  }

  /** Answer a guest→host call. Ignored once the run ended or for an unknown id. */
  reply(reply: CallReply): void {
    if (this.finished || !this.calls.has(reply.id)) return;
    this.toolBytes += reply.text.length * 2;
    this.replies.push(reply);
    this.pump();
  }

  /** End the run now (cancelled, engine destroyed, memory exceeded from outside…). */
  abort(outcome: GuestOutcome): void {
    this.end(outcome);
  }

  /** The bridge the kernel calls: primitives in, primitives out, never throws. */
  private readonly bridge: KernelBridge = (op, a, b, c) => {
    try {
      switch (op) {
        case "log":
          return this.onLog(a, b);
        case "timer":
          return this.onTimer(a, b, c);
        case "clear":
          this.onClear(a);
          return undefined;
        case "done":
          this.onDone(a, b);
          return undefined;
        case "call":
          return this.onCall(a, b, c);
        case "callQueued": {
          // A realm whose guest does not wait for the answer (isolated-vm): a refusal is a failed reply.
          const answer = this.onCall(a, b, c);
          if (answer !== true && typeof a === "number" && !this.finished) {
            this.replies.push({ id: a, ok: false, text: typeof answer === "string" ? answer : "" });
            this.pump();
          }
          return undefined;
        }
        default:
          return undefined;
      }
    } catch {
      return undefined;
    }
  };

  private onLog(level: unknown, message: unknown): boolean {
    if (this.finished || typeof level !== "string" || !LEVELS.has(level) || typeof message !== "string")
      return false;
    if (this.logLines >= this.plan.maxLogLines) return false;
    this.logLines++;
    return this.collector.push(level as LogLevel, message);
  }

  private onTimer(id: unknown, ms: unknown, repeat: unknown): boolean | string {
    if (this.finished || typeof id !== "number" || typeof ms !== "number" || this.timers.has(id))
      return false;
    if (this.timers.size >= this.plan.maxTimers) {
      return `Too many pending timers in the sandbox (limit ${this.plan.maxTimers})`;
    }
    if (this.timersCreated >= this.plan.maxTimerCreations) {
      return `Too many timers created in this execution (limit ${this.plan.maxTimerCreations})`;
    }
    this.timersCreated++;
    const delay = Math.min(Math.max(1, ms), MAX_TIMER_MS);
    const handle =
      repeat === true
        ? setInterval(() => this.onDue(id, true), delay)
        : setTimeout(() => this.onDue(id, false), delay);
    this.timers.set(id, handle);
    return true;
  }

  private onClear(id: unknown): void {
    if (typeof id !== "number") return;
    const handle = this.timers.get(id);
    if (handle === undefined) return;
    clearTimeout(handle);
    this.timers.delete(id);
    this.oneShotDue.delete(id);
  }

  private onDue(id: number, repeat: boolean): void {
    if (this.finished) return;
    // A one-shot timer stays pending until its callback ran in the realm: while guest code runs on
    // another thread (an isolate) the host's timers keep firing, and the pending count must not drop.
    if (!repeat) this.oneShotDue.add(id);
    this.due.push(id);
    this.pump();
  }

  private onDone(kind: unknown, payload: unknown): void {
    if (this.finished || typeof payload !== "string") return;
    let outcome: GuestOutcome;
    if (kind === "value") outcome = { kind: "value", text: payload };
    else if (kind === "error") outcome = { kind: "error", error: parseErrorRecord(payload) };
    else if (kind === "untransferable") {
      const parsed = parseJson(payload) as { path?: unknown; what?: unknown } | undefined;
      outcome = {
        kind: "untransferable",
        path: typeof parsed?.path === "string" ? parsed.path : "result",
        what: typeof parsed?.what === "string" ? parsed.what : "not transferable",
      };
    } else return;
    const previous = this.reported;
    if (previous === undefined || (outcome.kind === "error" && previous.kind !== "error"))
      this.reported = outcome;
  }

  private onCall(id: unknown, name: unknown, text: unknown): boolean | string {
    if (this.finished || typeof id !== "number" || typeof name !== "string" || typeof text !== "string")
      return false;
    const onCall = this.plan.onCall;
    if (onCall === undefined)
      return JSON.stringify({ name: "Error", message: "host calls are not available" });
    let refusal: string | undefined;
    try {
      refusal = onCall({ id, name, text });
    } catch (error) {
      refusal = JSON.stringify({ name: "Error", message: messageOf(error) });
    }
    if (typeof refusal === "string") return refusal;
    this.calls.add(id);
    this.toolCalls++;
    this.toolBytes += text.length * 2;
    return true;
  }

  private async run(): Promise<void> {
    const realm = this.realm;
    if (realm === undefined) return;
    this.busy = true;
    const runConfig = JSON.stringify({
      maxResultBytes: this.plan.maxResultBytes,
      maxCallBytes: this.plan.maxCallBytes,
      maxLogChars: this.plan.maxOutputSize * LOG_FORMAT_OVERCOUNT,
      ...(this.plan.shift === undefined ? {} : { shift: this.plan.shift }),
      ...(this.plan.tools === undefined || this.plan.tools.length === 0 ? {} : { tools: this.plan.tools }),
    });
    let status = await realm.boot(
      runConfig,
      this.plan.contextText,
      this.plan.modulesText,
      this.plan.sourceModules,
      this.remaining(),
    );
    if (status.ok && this.reported === undefined && !this.finished)
      status = await realm.main(this.remaining());
    this.booted = true;
    this.busy = false;
    if (!status.ok) {
      this.end(status.outcome);
      return;
    }
    this.pump();
  }

  /** Run due timers and call replies one entry at a time, then see whether the run is over. */
  private pump(): void {
    if (this.busy || this.finished || !this.booted) return;
    const realm = this.realm;
    if (realm === undefined) return;
    const id = this.due.shift();
    if (id !== undefined && this.oneShotDue.delete(id)) this.timers.delete(id);
    const reply = id === undefined ? this.replies.shift() : undefined;
    if (id === undefined && reply === undefined) {
      this.check();
      return;
    }
    if (reply !== undefined) this.calls.delete(reply.id);
    const status =
      id !== undefined
        ? realm.enter("fire", [id], this.remaining())
        : realm.enter(
            "reply",
            [(reply as CallReply).id, (reply as CallReply).ok, (reply as CallReply).text],
            this.remaining(),
          );
    if (status instanceof Promise) {
      this.busy = true;
      void status.then((settled) => {
        this.busy = false;
        this.after(settled);
      });
    } else this.after(status);
  }

  private after(status: RealmStatus): void {
    if (!status.ok) {
      this.end(status.outcome);
      return;
    }
    this.pump();
  }

  private check(): void {
    const reported = this.reported;
    if (reported === undefined || this.finished) return;
    // A failure ends the run at once; a value waits for pending timers and host calls.
    if (reported.kind === "value" && (this.timers.size > 0 || this.calls.size > 0)) return;
    const realm = this.realm;
    if (realm?.quiesce === undefined) {
      this.end(reported);
      return;
    }
    this.busy = true;
    void realm.quiesce().then(() => {
      this.busy = false;
      const latest = this.reported;
      // A call queued by a realm that does not wait for the host's answer may have come in meanwhile.
      const waiting = latest?.kind === "value" && (this.timers.size > 0 || this.calls.size > 0);
      if (latest !== reported || waiting || this.due.length > 0 || this.replies.length > 0) this.pump();
      else this.end(reported);
    });
  }

  private remaining(): number {
    return Math.max(1, Math.ceil(this.startedAt + this.plan.timeoutMs - performance.now()));
  }

  private end(outcome: GuestOutcome): void {
    if (this.finished) return;
    this.finished = true;
    this.ended = outcome.kind === "timeout" ? { kind: "timeout", timeoutMs: this.plan.timeoutMs } : outcome;
    for (const handle of this.timers.values()) clearTimeout(handle);
    this.timers.clear();
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.due.length = 0;
    this.oneShotDue.clear();
    this.replies.length = 0;
    this.calls.clear();
    const realm = this.realm;
    this.realm = undefined;
    let memoryUsed: number | undefined;
    let cpuMs: number | undefined;
    try {
      memoryUsed = realm?.memoryUsed?.();
      cpuMs = realm?.cpuUsed?.();
    } catch {
      memoryUsed = undefined;
    }
    try {
      realm?.dispose();
    } catch {
      // Releasing a realm that already died is not the guest's failure.
    }
    this.resolveResult({
      outcome: this.ended,
      logs: this.collector.entries,
      duration: performance.now() - this.startedAt,
      memoryUsed,
      cpuMs,
      toolCalls: this.toolCalls,
      toolBytes: this.toolBytes,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An {@link ErrorRecord} from the kernel's JSON, keeping only well-typed fields. */
export function parseErrorRecord(text: string): ErrorRecord {
  const raw = parseJson(text) as Partial<Record<keyof ErrorRecord, unknown>> | undefined;
  const record: ErrorRecord = {
    name: typeof raw?.name === "string" ? raw.name : "",
    message: typeof raw?.message === "string" ? raw.message : "a value that could not be described",
    stack: typeof raw?.stack === "string" ? raw.stack : "",
  };
  if (typeof raw?.line === "number" && Number.isInteger(raw.line)) record.line = raw.line;
  if (typeof raw?.column === "number" && Number.isInteger(raw.column)) record.column = raw.column;
  if (raw?.unhandledRejection === true) record.unhandledRejection = true;
  if (typeof raw?.module === "string") record.module = raw.module;
  return record;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
