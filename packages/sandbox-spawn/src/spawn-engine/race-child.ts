import type { Readable, Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { LogEntry } from "@suaveplan/sandbox-core/types";
import type { GuestOutcome } from "@suaveplan/sandbox-guest";
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
  /** The request goes here (fd 0). */
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

/** Options of {@link raceChild}. */
export interface RaceChildOptions {
  /** The request, written to stdin (then stdin is ended). */
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
}

/**
 * Send the request to a runner child and wait for the first of its four
 * endings: `ok` (a done frame), `no-output` (closed without one),
 * `parse-error` (malformed output, or an `error` event before close) and
 * `timeout` (`Promise.race` against the deadline). Settling is idempotent —
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
  const parseError = (reason: string, error?: Error): ChildOutcome => {
    const outcome: ChildOutcome = { kind: "parse-error", reason, exitCode, signal, stderr: stderr.text() };
    if (error !== undefined) outcome.error = error;
    return outcome;
  };

  const decoder = new StringDecoder("utf8");
  // The unfinished line, as pieces: each chunk is scanned once, so a huge result stays linear.
  let pending: string[] = [];
  let received = 0;
  const handleLine = (line: string): void => {
    const frame = parseRunnerFrame(line);
    if ("malformed" in frame) settleEvents(parseError(frame.malformed));
    else if (frame.type === "start") arm("run", options.timeoutMs);
    else if (frame.type === "log") options.onLog?.({ level: frame.level, message: frame.message });
    else
      settleEvents({
        kind: "ok",
        outcome: frame.outcome,
        memoryUsed: frame.memoryUsed,
        stderr: stderr.text(),
      });
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
  child.stdin?.on("error", () => {}); // EPIPE when the child is already gone: its exit tells the story
  child.stdin?.end(options.input);

  const outcome = await Promise.race([events, deadline]);
  finished = true;
  clearTimeout(timer);
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
