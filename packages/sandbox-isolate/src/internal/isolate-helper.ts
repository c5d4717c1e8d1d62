import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { SANDBOX_CODES, type SandboxCode } from "@suaveplan/sandbox-core/error-codes";
import { failure, type HostCalls, type LogEntry, type SandboxResult } from "@suaveplan/sandbox-core/types";
import {
  type DriverEvent,
  DriverEventReceiver,
  type DriverReport,
  type ExecutionRequest,
  type GuestOutcome,
  toSandboxResult,
} from "@suaveplan/sandbox-guest";
import type { FromHelper, ToHelper } from "./helper-protocol.js";
import { killOnExit } from "./kill-on-exit.js";

/**
 * How long past its deadline a run may go without the helper's report before
 * the engine ends it as timed out and restarts the helper, in ms. The driver
 * in the helper enforces the deadline itself; this covers a helper that
 * cannot report.
 */
export const HELPER_BACKSTOP_MS = 2000;
/** How long a new helper may take to start listening, in ms. */
export const HELPER_START_TIMEOUT_MS = 15_000;
/** Variables the helper gets from the application's environment (nothing else: no secrets). */
const PASSED_ENV = ["TZ", "LANG", "LC_ALL", "SYSTEMROOT", "MALLOC_ARENA_MAX"] as const;

/**
 * glibc's malloc arenas the helper may use, unless the application set its
 * own `MALLOC_ARENA_MAX`. isolated-vm runs isolates on pool threads, each with
 * an arena of its own that keeps what disposed isolates freed: 500 mixed runs
 * (bombs included) grew a host's resident memory by 473 MiB with the default
 * arenas and by 152 MiB with two (`pnpm abuse`, in-process, Node 20).
 */
const HELPER_MALLOC_ARENAS = "2";

/** Where the built helper entry is: next to the package's built code, or in `dist/` when running from `src/`. */
export function findHelperEntry(): string | undefined {
  return ["./isolate-helper.js", "../../dist/isolate-helper.js"]
    .map((url) => fileURLToPath(new URL(url, import.meta.url)))
    .find((candidate) => existsSync(candidate));
}

/**
 * The helper's explicit environment: time zone and locale, so guest clocks
 * and `Intl` match in-process mode, and glibc's arena count (see
 * {@link HELPER_MALLOC_ARENAS}); nothing else.
 */
export function helperEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const picked: Record<string, string> = { MALLOC_ARENA_MAX: HELPER_MALLOC_ARENAS };
  for (const key of PASSED_ENV) {
    const value = env[key];
    if (typeof value === "string") picked[key] = value;
  }
  return picked;
}

/** Hooks of one {@link IsolateHelper.run}. */
export interface HelperRunHooks {
  onLog: ((entry: LogEntry) => void) | undefined;
  hostCalls: HostCalls | undefined;
}

/** One execution in the helper, as the engine holds it. */
export interface HelperRun {
  /** The result; never rejects. */
  readonly result: Promise<SandboxResult>;
  /** End the run now with `outcome` and tell the helper to stop it. */
  abort(outcome: GuestOutcome): void;
}

interface LiveHelper {
  readonly child: ChildProcess;
  ready: boolean;
  exited: boolean;
  /** Why the engine killed it, when it did (the other runs it held are told). */
  killedBecause: string | undefined;
  /** Runs waiting for `ready`, then running. */
  readonly runs: Map<number, RemoteRun>;
  readonly closed: Promise<void>;
  startTimer: NodeJS.Timeout | undefined;
}

/**
 * One helper process of an `IsolateEngine` in helper mode: `node
 * --no-node-snapshot isolate-helper.js`, started on the first execution sent
 * to it, shared by the executions sent to it (multiplexed by id over the
 * ordered IPC channel), and started anew on the next execution after it
 * died. While no execution runs it does not keep the application's event
 * loop alive; when the application exits it is killed
 * ({@link killOnExit}), and it ends itself when its channel closes.
 *
 * @internal
 */
export class IsolateHelper {
  private live: LiveHelper | undefined;
  private nextId = 1;
  private closing = false;

  constructor(
    private readonly entryPath: string,
    private readonly maxIdleIsolates: number,
  ) {}

  /** The running helper's process id, if one runs. */
  get pid(): number | undefined {
    const live = this.live;
    return live === undefined || live.exited ? undefined : live.child.pid;
  }

  /** Executions sent to the running helper (or waiting for it to start) and not ended. */
  get load(): number {
    const live = this.live;
    return live === undefined || live.exited ? 0 : live.runs.size;
  }

  /** Send one execution to the helper (starting it when none runs). */
  run(request: ExecutionRequest, memoryLimitMiB: number, hooks: HelperRunHooks): HelperRun {
    const helper = this.ensure();
    const run = new RemoteRun(this.nextId++, request, memoryLimitMiB, hooks, helper, (ended) => {
      helper.runs.delete(ended.id);
      this.hold(helper);
    });
    helper.runs.set(run.id, run);
    this.hold(helper);
    if (helper.ready) run.send();
    return run;
  }

  /** Drop the helper's warm isolates. */
  reset(): void {
    const live = this.live;
    if (live?.ready === true && !live.exited) send(live, { type: "reset" });
  }

  /** Kill the helper and wait until it is gone; later {@link run}s are refused by the engine. */
  async close(): Promise<void> {
    this.closing = true;
    const live = this.live;
    this.live = undefined;
    if (live === undefined) return;
    // A kill of an unref'd child: hold the event loop until it closed, or a script's last
    // `await engine.destroy()` would end the process first.
    holdOpen(live.child, true);
    killNow(live);
    await live.closed;
  }

  /** Ref the helper while a run needs it, unref it while idle. */
  private hold(helper: LiveHelper): void {
    if (!helper.exited) holdOpen(helper.child, helper.runs.size > 0);
  }

  private ensure(): LiveHelper {
    const current = this.live;
    if (current !== undefined && !current.exited) return current;
    const child = spawn(process.execPath, ["--no-node-snapshot", this.entryPath], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      env: helperEnv(),
      windowsHide: true,
      serialization: "json",
    });
    let markClosed!: () => void;
    killOnExit(child);
    const helper: LiveHelper = {
      child,
      ready: false,
      exited: false,
      killedBecause: undefined,
      runs: new Map(),
      closed: new Promise<void>((resolve) => {
        markClosed = resolve;
      }),
      startTimer: undefined,
    };
    helper.startTimer = setTimeout(() => {
      helper.startTimer = undefined;
      if (helper.ready) return;
      for (const run of [...helper.runs.values()]) {
        run.fail(
          `The isolate helper process did not start within ${HELPER_START_TIMEOUT_MS} ms; the host may be overloaded`,
        );
      }
      killNow(helper, "it did not start in time");
    }, HELPER_START_TIMEOUT_MS);
    helper.startTimer.unref();
    let spawnError: Error | undefined;
    const onExit = (): void => {
      helper.exited = true;
      clearTimeout(helper.startTimer);
      if (this.live === helper) this.live = undefined;
    };
    let settled = false;
    // On `close`, not `exit`: by then every message the helper sent has been delivered.
    const onClosed = (code: number | null, signal: NodeJS.Signals | null): void => {
      onExit();
      if (!settled) {
        settled = true;
        for (const run of [...helper.runs.values()]) {
          run.helperExited(helper, code, signal, this.closing, spawnError);
        }
      }
      markClosed();
    };
    child.on("error", (error) => {
      spawnError = error;
      // A failed spawn emits no exit; a failed kill or send leaves the process as it was.
      if (child.pid === undefined) onClosed(null, null);
    });
    child.on("exit", onExit);
    child.on("close", onClosed);
    child.on("message", (message: FromHelper) => {
      if (message?.type === "ready") {
        if (helper.ready) return;
        helper.ready = true;
        clearTimeout(helper.startTimer);
        send(helper, { type: "init", maxIdleIsolates: this.maxIdleIsolates });
        for (const run of [...helper.runs.values()]) run.send();
        return;
      }
      if (message?.type === "event" || message?.type === "refused") {
        helper.runs.get(message.id)?.onMessage(message);
      }
    });
    this.live = helper;
    return helper;
  }
}

/** One execution in the helper: the application's half of the transport. */
class RemoteRun implements HelperRun {
  readonly result: Promise<SandboxResult>;
  private readonly events: DriverEventReceiver;
  private readonly startedAt = performance.now();
  private finished = false;
  private sent = false;
  private backstop: NodeJS.Timeout | undefined;
  private resolveResult!: (result: SandboxResult) => void;

  constructor(
    readonly id: number,
    private readonly request: ExecutionRequest,
    private readonly memoryLimitMiB: number,
    hooks: HelperRunHooks,
    private readonly helper: LiveHelper,
    private readonly onEnd: (run: RemoteRun) => void,
  ) {
    this.result = new Promise((resolve) => {
      this.resolveResult = resolve;
    });
    this.events = new DriverEventReceiver({
      onLog: hooks.onLog,
      hostCalls: hooks.hostCalls,
      sendReply: (reply) => send(helper, { type: "reply", id, reply }),
      ended: () => this.finished,
      onDone: (outcome, report) => this.end(outcome, report),
    });
  }

  send(): void {
    if (this.finished || this.sent) return;
    this.sent = true;
    const { request, memoryLimitMiB, id } = this;
    if (!send(this.helper, { type: "run", id, request, memoryLimitMiB })) {
      this.fail("The execution could not be sent to the isolate helper process");
      return;
    }
    this.backstop = setTimeout(() => {
      // The helper enforces the deadline itself: one that did not report is stuck; replace it.
      this.end({ kind: "timeout", timeoutMs: request.timeoutMs });
      killNow(this.helper, "it stopped answering (an execution's deadline passed without its report)");
    }, request.timeoutMs + HELPER_BACKSTOP_MS);
  }

  abort(outcome: GuestOutcome): void {
    if (this.finished) return;
    if (this.sent) send(this.helper, { type: "abort", id: this.id });
    this.end(outcome);
  }

  onMessage(message: Extract<FromHelper, { type: "event" | "refused" }>): void {
    if (this.finished) return;
    if (message.type === "refused") {
      const duration = performance.now() - this.startedAt;
      this.finish(
        failure(asCode(message.code), String(message.message), { duration, logs: this.events.logs }),
      );
      return;
    }
    this.events.receive(message.event as DriverEvent);
  }

  /** The helper went away with this run unfinished. */
  helperExited(
    helper: LiveHelper,
    code: number | null | undefined,
    signal: NodeJS.Signals | null | undefined,
    closing: boolean,
    spawnError?: Error,
  ): void {
    if (closing) {
      this.end({ kind: "disposed", message: "IsolateEngine was destroyed while the code ran" });
      return;
    }
    if (spawnError !== undefined) {
      // No process ran: the error's code only (its message names the host's paths).
      const reason = (spawnError as NodeJS.ErrnoException).code ?? spawnError.name;
      this.fail(
        `The isolate helper process could not be started (${reason}); the next execution tries again`,
      );
      return;
    }
    const pid = helper.child.pid;
    const how =
      helper.killedBecause !== undefined
        ? `was killed by the engine because ${helper.killedBecause}`
        : describeDeath(code, signal);
    this.end(
      {
        kind: "fault",
        message: `The isolate helper process${pid === undefined ? "" : ` (pid ${pid})`} ${how} ${helper.ready ? "while the code ran" : "before it could run the code"}; every execution it held failed with it, and the next execution starts a new helper`,
      },
      undefined,
      // Before `ready` no guest code ran there: the helper could not start, it did not crash under a run.
      helper.ready ? SANDBOX_CODES.ENGINE_CRASHED : SANDBOX_CODES.ENGINE_FAILED,
    );
  }

  fail(message: string): void {
    this.end({ kind: "fault", message });
  }

  private end(outcome: GuestOutcome, report?: DriverReport, faultCode?: SandboxCode): void {
    if (this.finished) return;
    this.finish(
      toSandboxResult(outcome, {
        duration: performance.now() - this.startedAt,
        logs: this.events.logs,
        ...(report ?? this.events.seen()),
        ...(faultCode === undefined ? {} : { faultCode }),
      }),
    );
  }

  private finish(result: SandboxResult): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.backstop);
    this.onEnd(this);
    this.resolveResult(result);
  }
}

function send(helper: LiveHelper, message: ToHelper): boolean {
  if (helper.exited || !helper.child.connected) return false;
  try {
    helper.child.send(message);
    return true;
  } catch {
    return false;
  }
}

/** What ended a helper process, from its exit code or signal (no host paths: this text reaches callers). */
function describeDeath(code: number | null | undefined, signal: NodeJS.Signals | null | undefined): string {
  if (signal === null || signal === undefined) return `exited with code ${code ?? "unknown"}`;
  if (FATAL_SIGNALS.has(signal)) {
    return `crashed (${signal}: a fatal error in V8 or isolated-vm, such as running out of memory in a way the isolate's heap limit did not catch)`;
  }
  if (signal === "SIGKILL") {
    return "was killed by SIGKILL (by another process, or by the system's out-of-memory killer)";
  }
  return `was killed by ${signal}`;
}

/** Signals a process raises on itself when it crashes (V8's fatal errors abort). */
const FATAL_SIGNALS: ReadonlySet<string> = new Set([
  "SIGABRT",
  "SIGSEGV",
  "SIGBUS",
  "SIGILL",
  "SIGFPE",
  "SIGTRAP",
]);

function killNow(helper: LiveHelper, because?: string): void {
  if (helper.exited || helper.child.exitCode !== null || helper.child.signalCode !== null) return;
  helper.killedBecause ??= because;
  try {
    helper.child.kill("SIGKILL");
  } catch {
    // Already gone.
  }
}

/** `ref` (a run needs the helper) or `unref` (idle) the child and its IPC channel. */
function holdOpen(child: ChildProcess, hold: boolean): void {
  const channel = child.channel as { ref?: () => void; unref?: () => void } | null | undefined;
  if (hold) {
    child.ref();
    channel?.ref?.();
  } else {
    child.unref();
    channel?.unref?.();
  }
}

const CODES: ReadonlySet<string> = new Set(Object.values(SANDBOX_CODES));

function asCode(code: string): SandboxCode {
  return CODES.has(code) ? (code as SandboxCode) : SANDBOX_CODES.ENGINE_FAILED;
}
