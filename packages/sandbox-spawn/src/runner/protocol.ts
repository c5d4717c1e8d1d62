import type { LogLevel } from "@suaveplan/sandbox-core/types";

/**
 * The wire protocol between SpawnEngine and its runner child.
 *
 * - fd 0 (stdin): one JSON {@link RunnerInput} ending in a newline (or at
 *   end-of-file); the runner reads no further.
 * - fd 3 (a dedicated pipe): newline-delimited JSON {@link RunnerFrame}s from
 *   the runner — `start`, `log`…, `truncated`, then one `result`.
 * - fd 1 (stdout) is not read at all, fd 2 (stderr) only for diagnostics.
 *
 * Guest code never holds a file descriptor: its console lines reach fd 3 only
 * as JSON string values inside `log` frames written by the runner, so printing
 * a fake result (to the console or anywhere else) cannot end a frame early or
 * forge a `result` frame.
 */

/** The file descriptor the runner writes its frames to. */
export const PROTOCOL_FD = 3;

/** Console levels accepted in `log` frames. */
export const LOG_LEVELS: readonly LogLevel[] = Object.freeze(["log", "info", "warn", "error", "debug"]);

/** A module as the runner receives it: plain data and/or guest source. */
export interface RunnerModule {
  /** Global name inside the sandbox. */
  name: string;
  /** JSON data; the initial `module.exports`. */
  exports?: unknown;
  /** Guest JavaScript assigning `module.exports`, evaluated inside the sandbox. */
  source?: string;
}

/** The request the runner reads from stdin. */
export interface RunnerInput {
  /** Guest source, evaluated as a strict-mode script; its completion value is the result. */
  code: string;
  /** JSON data defined as guest globals. */
  context: Record<string, unknown>;
  /** Modules defined as guest globals before `context`. */
  modules: RunnerModule[];
  /** Console output budget, in UTF-8 bytes. */
  maxOutputSize: number;
  /**
   * The host's timeout, in ms. The host enforces it with SIGKILL; the runner
   * also bounds itself (top-level sync code by the vm timeout, everything else
   * by a deadline {@link SELF_DEADLINE_GRACE_MS} later) so a child whose host
   * died does not run on.
   */
  timeoutMs?: number;
}

/** How long after `timeoutMs` the runner ends itself when the host has not, in ms. */
export const SELF_DEADLINE_GRACE_MS = 1000;

/** Why a runner result failed. */
export type RunnerErrorKind = "guest" | "transfer" | "input" | "timeout";

/** The final frame: the outcome of the guest code. */
export type RunnerOutput =
  | {
      type: "result";
      success: true;
      /** Completion value as JSON data; absent for `undefined`. */
      result?: unknown;
      /** `process.memoryUsage().heapUsed` growth during the execution, in bytes. */
      memoryUsed: number;
    }
  | {
      type: "result";
      success: false;
      /** One line: `Name: message`, never a stack trace or a host path. */
      error: string;
      /** `guest`: the code threw or rejected; `transfer`: the result cannot cross; `input`: bad request; `timeout`: the runner's own bound. */
      errorKind: RunnerErrorKind;
      /** `process.memoryUsage().heapUsed` growth during the execution, in bytes. */
      memoryUsed: number;
    };

/** One newline-delimited frame on {@link PROTOCOL_FD}. */
export type RunnerFrame =
  | { type: "start" }
  | { type: "log"; level: LogLevel; message: string }
  | { type: "truncated" }
  | RunnerOutput;

/** Console lines the runner forwards per execution, at most: `max(1000, maxOutputSize / 16)`. */
export function maxLogLines(maxOutputSize: number): number {
  return Math.max(1000, Math.floor(maxOutputSize / 16));
}
