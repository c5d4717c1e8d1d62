import { Worker } from "node:worker_threads";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { CodeCacheStatus, DriverEvent } from "@suaveplan/sandbox-guest";
import { resourceLimitsFor } from "./resource-limits.js";
import {
  rememberWorkerCodeCaches,
  WORKER_LOADER,
  workerCodeCaches,
  workerEntryFunction,
  workerKernelBinding,
  workerKernelSource,
} from "./worker-entry-source.js";
import { readCallMessage, type WorkerMessage } from "./worker-message.js";

/** Who hears a worker's events: the execution that owns it, if any. */
export interface ThreadListener {
  /** The worker has booted and waits for its request. */
  onReady(): void;
  /** A driver event (`log`, `done`) from the worker. */
  onEvent(event: DriverEvent): void;
  /** The worker died (`ERR_WORKER_OUT_OF_MEMORY`, an uncaught error). */
  onError(error: Error): void;
  /** The worker exited. */
  onExit(exitCode: number): void;
}

/** One worker thread running the built worker entry: single-use, or serving runs in turn (the reuse tier). */
export interface WorkerThread {
  readonly worker: Worker;
  /** The heap budget the worker was started with, in bytes. */
  readonly memoryLimit: number;
  /** Whether the worker ran the warm-up request before its `ready` (see {@link startWorkerThread}). */
  readonly warmUp: boolean;
  /** True while the entry takes a run: after its `ready`, or on a reused worker after its `done`, until a run is sent. */
  ready: boolean;
  /** Runs sent to this worker so far. */
  runs: number;
  exited: boolean;
  /** Whether the entry and the kernel were compiled from the host's code caches, once the worker is ready. */
  cacheStatus: { entry: CodeCacheStatus; kernel: CodeCacheStatus } | undefined;
  listener: ThreadListener | undefined;
}

/**
 * Start a worker on the built entry with V8 `resourceLimits` for
 * `memoryLimit` (bytes), no environment, no argv and its stdio discarded (by
 * the entry). The worker is ref'd as it starts; the caller `unref()`s an idle
 * one (a spare, an idle reused worker) and refs it again for a run.
 * The entry and the guest kernel are compiled with the code caches the first
 * warmed worker made (about 10 ms of CPU less per worker, measured).
 * `source` replaces the entry only in tests, for worker behaviour no guest can
 * cause (a worker that dies or never reports). `warmUp` (default true)
 * runs a throwaway request through the kernel before `ready`, so a spare
 * answers its later call with warm code; a worker started for a caller
 * already waiting skips it (it would only delay that call and cost its CPU).
 * @throws SandboxError `SANDBOX_WORKER_FAILED` when the built entry is missing.
 */
export function startWorkerThread(
  memoryLimit: number,
  onExit: (thread: WorkerThread) => void,
  source?: string,
  warmUp = true,
): WorkerThread {
  const entry = source === undefined ? workerEntryFunction() : undefined;
  if (source === undefined && entry === undefined) {
    throw new SandboxError(
      SANDBOX_CODES.WORKER_FAILED,
      "the worker entry (worker-entry.cjs) is missing from the package's dist/; run `pnpm build` in @suaveplan/sandbox-worker",
    );
  }
  const caches = workerCodeCaches();
  const worker = new Worker(source ?? WORKER_LOADER, {
    eval: true,
    resourceLimits: resourceLimitsFor(memoryLimit),
    // Defence in depth: with it, node:vm honours the realm's import() refusal (a guest-realm
    // TypeError); the shared runtime refuses `import` before running code anyway.
    execArgv: ["--experimental-vm-modules"],
    argv: [],
    env: {},
    // The entry caps each realm's Wasm memory at the limit (see `capWasmMemory`).
    // A warmed worker makes the code caches when this process has none yet.
    workerData: {
      warmUp,
      memoryLimit,
      entry,
      codeCache: caches?.entry,
      kernelBinding: workerKernelBinding(),
      kernelSource: workerKernelSource(),
      kernelCache: caches?.kernel,
      makeCodeCache: warmUp && caches === undefined,
    },
    // Node's default stdio (piped to the host's, never ref'd): the entry drops what is written
    // (`discardWorkerStdio`). Reading it here (`stdout: true` and `resume()`) would ref the
    // worker's internal port until it exits, and an idle spare would keep the process alive.
  });
  const thread: WorkerThread = {
    worker,
    memoryLimit,
    warmUp,
    ready: false,
    runs: 0,
    exited: false,
    cacheStatus: undefined,
    listener: undefined,
  };
  worker.on("message", (message: WorkerMessage) => {
    if (typeof message === "string") {
      const call = readCallMessage(message);
      if (call !== undefined) thread.listener?.onEvent({ type: "call", call });
    } else if (message?.type === "ready") {
      if (message.caches !== undefined) rememberWorkerCodeCaches(message.caches);
      thread.cacheStatus = message.cacheStatus;
      thread.ready = true;
      thread.listener?.onReady();
    } else thread.listener?.onEvent(message);
  });
  worker.on("error", (error) => thread.listener?.onError(error));
  worker.on("exit", (exitCode) => {
    thread.exited = true;
    onExit(thread);
    thread.listener?.onExit(exitCode);
  });
  return thread;
}
