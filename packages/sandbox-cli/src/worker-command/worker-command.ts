import type { ToolSet } from "@suaveplan/sandbox";
import { isSuaveplanError, SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { type EngineName, MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import { type SandboxWorker, startSandboxWorker } from "@suaveplan/sandbox-queue";
import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES } from "../cli/exit-codes.js";
import { STOP_EXIT_CODES, type StopReason } from "../cli/process-stop.js";
import { UsageError } from "../cli/usage-error.js";
import { checkEngines } from "./check-engines.js";

/** Parsed `worker` options (units in the names). */
export interface WorkerOptions {
  /** `--redis`: a Redis URL (`redis://`, `rediss://`, `unix://`) or a socket path. */
  redis: string;
  queue: string;
  /** The engines this worker runs; a job for another is refused. */
  engines: EngineName[];
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  leaseMs: number;
  /** `--drain`: how long running jobs may finish after SIGTERM/SIGINT before they are handed back. */
  drainMs: number;
  /** `--transport`: how inbox messages travel; the callers' must match. */
  transport: "relay" | "queues";
  /** `--start-timeout`: how long to wait for Redis at start. */
  startTimeoutMs: number;
  /** `--prefix`: the Redis key prefix. */
  prefix: string;
  /** `--tools`: worker-side tools (the callers' tools run in the callers). */
  tools?: ToolSet;
}

/** What `close()` may take beyond `--drain`: stopping the guests, handing their jobs back, ending the engines. */
const CLOSE_MARGIN_MS = 5_000;

/** The flag of each `startSandboxWorker` option, to word its refusals as the command line was written. */
const FLAGS: Record<string, string> = {
  connection: "--redis",
  queue: "--queue",
  concurrency: "--concurrency",
  lockDuration: "--lock-duration",
  stalledInterval: "--stalled-interval",
  lease: "--lease",
  drainTimeout: "--drain",
  transport: "--transport",
  prefix: "--prefix",
  tools: "--tools",
};

/**
 * `suaveplan-sandbox worker`: take executions from the queue and run them on
 * this host's engines until SIGTERM or SIGINT, then close gracefully (no new
 * jobs; running ones get `--drain` to finish, then go back to the queue for
 * another worker). Prints one `ready` line on stderr once it takes jobs.
 * Resolves 0 after SIGTERM, 130 after SIGINT (141 when stderr's reader went away).
 * @throws UsageError for an unknown engine, one this host cannot run, or an option the worker refuses.
 */
export async function workerCommand(options: WorkerOptions, io: CliIo): Promise<number> {
  await checkEngines(options.engines);
  let stopped: StopReason | undefined;
  let onStopped: (() => void) | undefined;
  const stop = new Promise<void>((resolve) => {
    onStopped = resolve;
  });
  const graceMs = Math.min(options.drainMs + CLOSE_MARGIN_MS, MAX_TIMER_MS);
  const unregister = io.onStop?.(
    (reason) => {
      stopped ??= reason;
      onStopped?.();
    },
    { graceMs },
  );
  try {
    const worker = await start(options, stop);
    if (worker === undefined) return exitCode(stopped ?? "SIGTERM");
    io.stderr(
      `suaveplan-sandbox worker: ready — queue ${options.queue}, engines ${options.engines.join(",")}, concurrency ${options.concurrency}, inbox ${worker.address}\n`,
    );
    // Without signal handling (the CLI run in-process) there is nothing to wait for: the worker closes at once.
    if (unregister !== undefined) await stop;
    const reason = stopped ?? "SIGTERM";
    const running = worker.running;
    io.stderr(
      `suaveplan-sandbox worker: ${reason}: taking no new jobs; ${running === 0 ? "none running" : `${running} running, given ${options.drainMs} ms to finish before they go back to the queue`}\n`,
    );
    await worker.close();
    io.stderr("suaveplan-sandbox worker: stopped\n");
    return exitCode(reason);
  } finally {
    unregister?.();
  }
}

/** A graceful stop asked for by a process manager is a success; an interrupt keeps `run`'s 130. */
function exitCode(reason: StopReason): number {
  return reason === "SIGTERM" ? EXIT_CODES.ok : STOP_EXIT_CODES[reason];
}

/**
 * Start the worker; undefined when a stop came first. A Redis that does not
 * answer fails after `--start-timeout` (`startSandboxWorker`'s `startTimeout`:
 * ioredis would retry an unreachable host or socket for ever).
 */
async function start(options: WorkerOptions, stop: Promise<void>): Promise<SandboxWorker | undefined> {
  const starting = startSandboxWorker({
    connection: options.redis,
    queue: options.queue,
    engines: options.engines,
    concurrency: options.concurrency,
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    lease: options.leaseMs,
    drainTimeout: options.drainMs,
    transport: options.transport,
    startTimeout: options.startTimeoutMs,
    prefix: options.prefix,
    ...(options.tools === undefined ? {} : { tools: options.tools }),
  });
  let outcome: SandboxWorker | "stopped";
  try {
    outcome = await Promise.race([starting, stop.then(() => "stopped" as const)]);
  } catch (error) {
    if (isSuaveplanError(error) && error.code === SANDBOX_CODES.ENGINE_UNAVAILABLE) {
      const why = error.message.replace(/^.*?; last: /, "").replace(/ \(SANDBOX_[A-Z_]+\).*$/s, "");
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_UNAVAILABLE,
        `Redis at ${redacted(options.redis)} did not answer within ${options.startTimeoutMs} ms (--start-timeout; last: ${why}): check that it runs there and that this host can reach it`,
      );
    }
    throw refusal(error);
  }
  if (typeof outcome === "object") return outcome;
  // Stopped while starting: a worker that starts after all closes at once.
  void starting.then((late) => late.close()).catch(() => undefined);
  return undefined;
}

/** A refusal of `startSandboxWorker`, worded with the command's flags; a bad option is a usage error. */
function refusal(error: unknown): unknown {
  if (!isSuaveplanError(error)) return error;
  const message = error.message.replace(
    /^worker options\.(\w+):/,
    (whole, key: string) => `${FLAGS[key] ?? whole.slice(0, -1)}:`,
  );
  if (error.code === SANDBOX_CODES.INVALID_CONFIG) return new UsageError(message);
  return new Error(message, { cause: error });
}

/** The URL without its password, for messages and logs. */
function redacted(redis: string): string {
  try {
    const url = new URL(redis);
    if (url.password !== "") url.password = "***";
    return url.toString();
  } catch {
    return redis;
  }
}
