import type { DriverEvent } from "@suaveplan/sandbox-guest/realm";

/**
 * The wire protocol between SpawnEngine and its runner child.
 *
 * - fd 0 (stdin): one `ExecutionRequest` (`@suaveplan/sandbox-guest`) as
 *   JSON, ending in a newline (or at end-of-file); then, when the request
 *   offers `tools`, one `CallReply` JSON line per answered call, in any order
 *   (a line that is not a well-formed reply is ignored).
 * - fd 3 (a dedicated pipe): newline-delimited JSON {@link RunnerFrame}s from
 *   the runner — `start` once the request is accepted, a `log` frame for each
 *   console line as the guest writes it, a `call` frame for each guest→host
 *   call (`tools.<name>(input)`), then one `done` frame carrying the
 *   `GuestOutcome`, the heap growth, the CPU time, the tool-call counts and
 *   the peak memory growth. The `log` and `call` frames are the shared
 *   driver's `DriverEvent`s as they are; `done` adds `peakBytes`.
 * - fd 1 (stdout) is not read at all, fd 2 (stderr) only for diagnostics and
 *   out-of-memory detection.
 *
 * Guest code never holds a file descriptor: its console lines reach fd 3 only
 * as JSON string values inside `log` frames written by the runner, so printing
 * a fake frame (to the console or anywhere else) cannot end a frame early or
 * forge a `done` frame.
 */

/** The file descriptor the runner writes its frames to. */
export const PROTOCOL_FD = 3;

/**
 * How long after the request's `timeoutMs` the runner ends the run itself, in
 * ms. The host's SIGKILL at `timeoutMs` is the timeout; this bound only
 * matters for a child whose host died and will never kill it.
 */
export const SELF_DEADLINE_GRACE_MS = 1000;

/**
 * The driver's `done` event plus what only the runner's process can tell:
 * `peakBytes`, how far its resident memory peaked above what it was at the
 * `start` frame (the kernel's high-water mark, `getrusage` `ru_maxrss`), or 0
 * when the run set no new peak. It catches an allocation the host's sampling
 * missed between two samples.
 */
export type RunnerDoneFrame = Extract<DriverEvent, { type: "done" }> & { peakBytes?: number };

/** One newline-delimited frame on {@link PROTOCOL_FD}. */
export type RunnerFrame =
  | { type: "start" }
  | Extract<DriverEvent, { type: "log" | "call" }>
  | RunnerDoneFrame;
