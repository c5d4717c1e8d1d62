/** Why the CLI is asked to stop early: a signal, or its standard output went to a closed pipe. */
export type StopReason = "SIGINT" | "SIGTERM" | "EPIPE";

/** Exit code for each stop reason: 128 + the signal number (SIGPIPE for a closed pipe). */
export const STOP_EXIT_CODES: Readonly<Record<StopReason, number>> = Object.freeze({
  SIGINT: 130,
  SIGTERM: 143,
  EPIPE: 141,
});

/** How long a stopped command may take to wind down before the CLI exits anyway, in ms. */
export const STOP_GRACE_MS = 3_000;

/** How a command winds down once stopped. */
export interface StopOptions {
  /** How long the command may take to wind down before the CLI exits anyway, in ms. Default {@link STOP_GRACE_MS}. */
  graceMs?: number;
}

/** The registered handlers, each with its grace period (ms). */
const handlers = new Map<(reason: StopReason) => void, number>();
let stopping: StopReason | undefined;

/**
 * Register `handler` to run when the CLI is interrupted (SIGINT, SIGTERM) or
 * its stdout/stderr reaches a closed pipe (EPIPE); returns the unregister
 * function. With a handler registered the CLI waits for the command to wind
 * down (the handler ends it), for the longest `graceMs` registered at most
 * ({@link STOP_GRACE_MS} by default: a `worker` draining its jobs asks for
 * more); a second signal, or a stop with no handler, exits at once with
 * {@link STOP_EXIT_CODES}.
 */
export function onStop(handler: (reason: StopReason) => void, options: StopOptions = {}): () => void {
  handlers.set(handler, options.graceMs ?? STOP_GRACE_MS);
  if (stopping !== undefined) handler(stopping);
  return () => handlers.delete(handler);
}

/** The reason the CLI is stopping, once it is. */
export function stopReason(): StopReason | undefined {
  return stopping;
}

function stop(reason: StopReason): void {
  if (stopping !== undefined || handlers.size === 0) {
    if (reason !== "EPIPE" && stopping === undefined)
      quietWrite(`suaveplan-sandbox: interrupted by ${reason}\n`);
    process.exit(STOP_EXIT_CODES[stopping ?? reason]);
  }
  stopping = reason;
  // The handlers end what the command started; should that hang, the CLI still ends.
  const graceMs = Math.max(...handlers.values());
  setTimeout(() => process.exit(STOP_EXIT_CODES[reason]), graceMs).unref();
  for (const handler of [...handlers.keys()]) handler(reason);
}

function quietWrite(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // stderr is gone too
  }
}

/**
 * Route SIGINT/SIGTERM and EPIPE on stdout/stderr through {@link onStop}, so
 * no signal kills the CLI mid-cleanup and no closed pipe prints a stack trace.
 */
export function installStopHandling(): void {
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") stop("EPIPE");
      else throw error;
    });
  }
}
