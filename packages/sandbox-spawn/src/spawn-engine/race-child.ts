import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { LogEntry } from "@suaveplan/sandbox-core/types";
import type { CallReply, GuestCall, GuestOutcome } from "@suaveplan/sandbox-guest";
import { killNow } from "../internal/child-control.js";
import { parseRunnerFrame } from "./parse-runner-frame.js";

/**
 * The part of a `ChildProcess` that SpawnEngine and {@link raceChild} use. The
 * real `node:child_process` child satisfies it; tests may pass a fake where a
 * real child cannot produce the case (races between exit, error and timeout).
 */
export interface SpawnedChild {
  /** OS process id; `undefined` when the spawn failed. */
  readonly pid?: number | undefined;
  /** Exit code once exited, else `null`. */
  readonly exitCode: number | null;
  /** Terminating signal once exited by a signal, else `null`. */
  readonly signalCode: NodeJS.Signals | null;
  /** The request, then the replies to its host calls, go here (fd 0). */
  readonly stdin: Writable | null;
  /** Diagnostics only (fd 2). */
  readonly stderr: Readable | null;
  /** `stdio[3]` carries the runner's frames. */
  readonly stdio: ArrayLike<Readable | Writable | null | undefined>;
  /** Send a signal; may throw on some platforms when the child already exited. */
  kill(signal?: NodeJS.Signals | number): boolean;
  /** Subscribe to `exit` (code, signal), `close` (code, signal) or `error` (error). */
  on(event: "exit" | "close" | "error", listener: ChildListener): unknown;
  /** Unsubscribe. */
  off(event: "exit" | "close" | "error", listener: ChildListener): unknown;
  /** Keep the host's event loop alive while the child runs. */
  ref?(): void;
  /** Let the host exit while the child runs. */
  unref?(): void;
}

/** A child event listener (`exit`/`close`: code, signal; `error`: the error). */
export type ChildListener = (...args: unknown[]) => void;

/** How {@link raceChild} ended. */
export type ChildOutcome =
  | {
      /** The runner sent its `done` frame. */
      kind: "ok";
      /** How the run ended, as the runner's driver decided. */
      outcome: GuestOutcome;
      /** The child's heap growth over the run, in bytes, when it could tell. */
      memoryUsed: number | undefined;
      /** CPU time of the guest's realm entries in the child, in ms, when the runner sent it. */
      cpuMs?: number;
      /** Host calls the child's driver accepted, when the runner sent it. */
      toolCalls?: number;
      /** Bytes of those calls' inputs and outputs (codec text × 2), when the runner sent it. */
      toolBytes?: number;
      stderr: string;
    }
  | {
      /** `signal` aborted before the child answered; the child was killed. */
      kind: "cancelled";
      stderr: string;
    }
  | {
      /** The child's resident memory grew past {@link ChildMemoryWatch.limitBytes}; the child was killed. */
      kind: "memory";
      /** The growth at the sample that passed the limit, in bytes. */
      grownBytes: number;
      stderr: string;
    }
  | {
      /** `start`: no start frame within `startTimeoutMs`; `run`: no done frame within `timeoutMs` after it. */
      kind: "timeout";
      phase: "start" | "run";
      stderr: string;
    }
  | {
      /** The child closed without a done frame (and without malformed output). */
      kind: "no-output";
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      stderr: string;
    }
  | {
      /** Malformed or oversized output, or an `error` event (e.g. the spawn failed) before close. */
      kind: "parse-error";
      reason: string;
      error?: Error;
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      stderr: string;
    };

/** How {@link raceChild} answers the child's `call` frames (see {@link RaceChildOptions.calls}). */
export interface ChildCalls {
  /** The tool names the request offered; a call for any other name breaks the protocol. */
  readonly names: readonly string[];
  /** The request's `maxCallBytes`: a call whose input text is larger (UTF-16 code units × 2) breaks the protocol. */
  readonly maxCallBytes: number;
  /** Answer one call (`answerCall` from `@suaveplan/sandbox-guest`); never rejects. */
  answer(call: GuestCall): Promise<CallReply>;
}

/** Options of {@link raceChild}. */
export interface RaceChildOptions {
  /**
   * The request, written to stdin. Without {@link calls} stdin is ended right
   * after it; with them it stays open for the replies until the race ends.
   */
  input: string;
  /** Guest wall-clock limit, in ms, counted from the runner's `start` frame. */
  timeoutMs: number;
  /** Limit for the child to boot, read the request and send `start`, in ms. */
  startTimeoutMs: number;
  /** Protocol bytes accepted on fd 3 before the child is treated as broken. */
  maxProtocolBytes: number;
  /** Stderr bytes kept for diagnostics (the first ones). */
  maxStderrBytes: number;
  /** After its done frame, how long the child may take to exit by itself before SIGKILL, in ms. Default 1000. */
  exitGraceMs?: number;
  /** Called in order with every console line (`log` frame), as it arrives. */
  onLog?: (entry: LogEntry) => void;
  /**
   * Answers the child's `call` frames; each reply is written to stdin as one
   * JSON line, unless the race ended meanwhile (then it is dropped). Without
   * it a `call` frame breaks the protocol: the child was offered no tools.
   */
  calls?: ChildCalls | undefined;
  /** Aborting it ends the race at once with `cancelled` (and the child is killed). */
  signal?: AbortSignal | undefined;
  /** Sample the child's memory while it runs the request; past the limit the race ends with `memory`. */
  memory?: ChildMemoryWatch | undefined;
}

/**
 * How {@link raceChild} watches a running child's memory (see
 * {@link RaceChildOptions.memory}): sampled every `intervalMs`, and at the
 * end against the peak the runner reports in its done frame (`peakBytes`).
 */
export interface ChildMemoryWatch {
  /** Growth allowed over the child's memory at its `start` frame, in bytes. */
  readonly limitBytes: number;
  /** Sampling interval, in ms. */
  readonly intervalMs: number;
  /** The child's memory now, in bytes (`readResidentBytes`); `undefined` ends the watch. */
  read(pid: number): number | undefined;
}

/**
 * Send the request to a runner child, answer its host calls, and wait for
 * the first of its six endings: `ok` (a done frame), `no-output` (closed
 * without one), `parse-error` (malformed output — a call frame beyond the
 * request's bounds included — or an `error` event before close), `timeout`
 * (`Promise.race` against the deadline), `cancelled` (`signal` aborted) and
 * `memory` (the child's memory, sampled from its start frame on, grew past
 * `options.memory.limitBytes`).
 * Settling is idempotent —
 * only the first outcome counts, so a timeout racing a clean exit never
 * resolves twice. Afterwards the child is sent SIGKILL unless it already
 * exited — at once, or after `exitGraceMs` for a child that answered (it
 * exits by itself); the kill is wrapped in try/catch because some platforms
 * throw for an exited process.
 */
export async function raceChild(child: SpawnedChild, options: RaceChildOptions): Promise<ChildOutcome> {
  const stderr = createStderrBuffer(options.maxStderrBytes);
  let exitCode: number | null = null;
  let signal: NodeJS.Signals | null = null;
  let finished = false;

  let settleEvents: (outcome: ChildOutcome) => void = () => {};
  const events = new Promise<ChildOutcome>((resolve) => {
    settleEvents = (outcome) => {
      finished = true;
      resolve(outcome);
    };
  });
  let timer: NodeJS.Timeout | undefined;
  let fireDeadline: (outcome: ChildOutcome) => void = () => {};
  const deadline = new Promise<ChildOutcome>((resolve) => {
    fireDeadline = resolve;
  });
  const arm = (phase: "start" | "run", ms: number): void => {
    clearTimeout(timer);
    timer = setTimeout(() => fireDeadline({ kind: "timeout", phase, stderr: stderr.text() }), ms);
  };
  let cancel: () => void = () => {};
  const cancelled = new Promise<ChildOutcome>((resolve) => {
    cancel = () => resolve({ kind: "cancelled", stderr: stderr.text() });
  });
  let sampler: NodeJS.Timeout | undefined;
  let exceed: (grownBytes: number) => void = () => {};
  const exceeded = new Promise<ChildOutcome>((resolve) => {
    exceed = (grownBytes) => resolve({ kind: "memory", grownBytes, stderr: stderr.text() });
  });
  /** From the start frame on: sample the child's memory against the watch's limit. */
  const watchMemory = (): void => {
    const watch = options.memory;
    const pid = child.pid;
    if (watch === undefined || pid === undefined || sampler !== undefined) return;
    const baseline = watch.read(pid);
    if (baseline === undefined) return;
    sampler = setInterval(() => {
      const now = watch.read(pid);
      if (now === undefined) clearInterval(sampler);
      else if (now - baseline > watch.limitBytes) {
        clearInterval(sampler);
        exceed(now - baseline);
      }
    }, watch.intervalMs);
  };
  const parseError = (reason: string, error?: Error): ChildOutcome => {
    const outcome: ChildOutcome = { kind: "parse-error", reason, exitCode, signal, stderr: stderr.text() };
    if (error !== undefined) outcome.error = error;
    return outcome;
  };

  const decoder = new StringDecoder("utf8");
  // The unfinished line, as pieces: each chunk is scanned once, so a huge result stays linear.
  let pending: string[] = [];
  let received = 0;
  const callIds = new Set<number>();
  const writeReply = (reply: CallReply): void => {
    const stdin = child.stdin;
    if (finished || stdin === null || stdin.destroyed || stdin.writableEnded) return; // the run ended: dropped
    try {
      stdin.write(`${JSON.stringify(reply)}\n`);
    } catch {
      // The child is gone: its exit tells the story.
    }
  };
  const handleCall = (call: GuestCall): void => {
    const calls = options.calls;
    const refusal =
      calls === undefined
        ? "the runner made a host call, but no tools were offered"
        : refuseCall(call, calls, callIds);
    if (refusal !== undefined) {
      settleEvents(parseError(refusal));
      return;
    }
    callIds.add(call.id);
    void calls?.answer(call).then(writeReply, ignore);
  };
  const handleLine = (line: string): void => {
    const frame = parseRunnerFrame(line);
    if ("malformed" in frame) settleEvents(parseError(frame.malformed));
    else if (frame.type === "start") {
      arm("run", options.timeoutMs);
      watchMemory();
    } else if (frame.type === "log") options.onLog?.({ level: frame.level, message: frame.message });
    else if (frame.type === "call") handleCall(frame.call);
    else if (options.memory !== undefined && (frame.peakBytes ?? 0) > options.memory.limitBytes) {
      // The kernel's high-water mark saw what the sampling missed between two samples.
      exceed(frame.peakBytes as number);
    } else {
      const ok: ChildOutcome = {
        kind: "ok",
        outcome: frame.outcome,
        memoryUsed: frame.memoryUsed,
        stderr: stderr.text(),
      };
      if (frame.cpuMs !== undefined) ok.cpuMs = frame.cpuMs;
      if (frame.toolCalls !== undefined) ok.toolCalls = frame.toolCalls;
      if (frame.toolBytes !== undefined) ok.toolBytes = frame.toolBytes;
      settleEvents(ok);
    }
  };
  const onProtocolData = (chunk: Buffer | string): void => {
    if (finished) return;
    received += typeof chunk === "string" ? Buffer.byteLength(chunk) : chunk.byteLength;
    if (received > options.maxProtocolBytes) {
      settleEvents(parseError(`the runner wrote more than ${options.maxProtocolBytes} protocol bytes`));
      return;
    }
    let text = typeof chunk === "string" ? chunk : decoder.write(chunk);
    let newline = text.indexOf("\n");
    while (newline !== -1 && !finished) {
      pending.push(text.slice(0, newline));
      const line = pending.join("");
      pending = [];
      handleLine(line);
      text = text.slice(newline + 1);
      newline = text.indexOf("\n");
    }
    if (text !== "" && !finished) pending.push(text);
  };
  const onStderrData = (chunk: Buffer | string): void => stderr.add(chunk);
  const onExit = (code: number | null, exitSignal: NodeJS.Signals | null): void => {
    exitCode = code;
    signal = exitSignal;
  };
  const onClose = (code: number | null, closeSignal: NodeJS.Signals | null): void => {
    onExit(code, closeSignal);
    settleEvents(
      pending.every((piece) => piece.trim() === "")
        ? { kind: "no-output", exitCode, signal, stderr: stderr.text() }
        : parseError("the runner's output ended in the middle of a frame"),
    );
  };
  const onError = (error: Error): void => {
    settleEvents(parseError(`error event: ${error.message}`, error));
  };

  const protocol = child.stdio[3] as Readable | null | undefined;
  child.on("exit", onExit as ChildListener);
  child.on("close", onClose as ChildListener);
  child.on("error", onError as ChildListener);
  child.stderr?.on("data", onStderrData);
  if (protocol === null || protocol === undefined || typeof protocol.on !== "function") {
    settleEvents(parseError("the child has no protocol pipe on fd 3"));
  } else {
    protocol.on("data", onProtocolData);
  }
  arm("start", options.startTimeoutMs);
  const { signal: abortSignal } = options;
  const stdin = child.stdin;
  stdin?.on("error", ignore); // EPIPE when the child is already gone: its exit tells the story
  if (abortSignal?.aborted === true) cancel();
  else {
    abortSignal?.addEventListener("abort", cancel, { once: true });
    if (options.calls === undefined) stdin?.end(options.input);
    else stdin?.write(options.input);
  }

  const outcome = await Promise.race([events, deadline, cancelled, exceeded]);
  finished = true;
  clearTimeout(timer);
  clearInterval(sampler);
  abortSignal?.removeEventListener("abort", cancel);
  if (options.calls !== undefined && stdin !== null && !stdin.destroyed) stdin.end();
  protocol?.off?.("data", onProtocolData);
  child.stderr?.off("data", onStderrData);
  child.off("exit", onExit as ChildListener);
  child.off("close", onClose as ChildListener);
  child.off("error", onError as ChildListener);
  if (outcome.kind === "ok") killAfterGrace(child, options.exitGraceMs ?? DEFAULT_EXIT_GRACE_MS);
  else killNow(child);
  return outcome;
}

/** Default of {@link RaceChildOptions.exitGraceMs}, in ms. */
export const DEFAULT_EXIT_GRACE_MS = 1000;

/**
 * A runner exits by itself right after its done frame; SIGKILL only one that
 * lingers. (Killing at once would put the kill, and the scheduler's switch to
 * the dying process, on the caller's path.)
 */
function killAfterGrace(child: SpawnedChild, graceMs: number): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const onExit = (): void => clearTimeout(timer);
  const timer = setTimeout(() => {
    child.off("exit", onExit);
    killNow(child);
  }, graceMs);
  timer.unref?.();
  child.on("exit", onExit);
}

/** Why a `call` frame breaks the protocol, or `undefined` when it is within the request's bounds. */
function refuseCall(call: GuestCall, calls: ChildCalls, seen: ReadonlySet<number>): string | undefined {
  if (!calls.names.includes(call.name)) return "the runner called a tool that was not offered";
  if (call.text.length * 2 > calls.maxCallBytes) {
    return `the runner sent a host call larger than ${calls.maxCallBytes} bytes`;
  }
  if (seen.has(call.id)) return "the runner repeated a host call id";
  return undefined;
}

function ignore(): void {}

function createStderrBuffer(maxBytes: number): { add(chunk: Buffer | string): void; text(): string } {
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk) {
      if (size >= maxBytes) return;
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      const kept = bytes.subarray(0, maxBytes - size);
      chunks.push(kept);
      size += kept.byteLength;
    },
    text() {
      return Buffer.concat(chunks).toString("utf8");
    },
  };
}
