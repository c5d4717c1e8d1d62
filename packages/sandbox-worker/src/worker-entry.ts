/**
 * The worker side of `WorkerEngine`: a transport and nothing more. Built as a
 * self-contained script (`dist/worker-entry.cjs`, the shared guest runtime
 * bundled in) whose text is passed to `new Worker(source, { eval: true })`.
 * It warms the kernel up, posts `ready`, takes one `run` request, runs it
 * with the shared driver on a fresh `node:vm` realm (`startVmExecution`),
 * streams each console line as a `log` event, forwards each guest→host call
 * as a `call` event (the host's `reply` goes back to the driver) and ends
 * with one `done` event carrying the outcome and the usage. By default the
 * host then terminates the worker. A `run` marked `reuse` (the engine's reuse
 * tier) is followed by a fresh realm for the next run, prepared in the same
 * task as its `done`, so the host may send the next `run` at once; replies
 * are matched to their run by number, so none reaches a later run.
 */
import { parentPort, workerData } from "node:worker_threads";
import { MEMORY_SAMPLE_MS } from "@suaveplan/sandbox-core/worker-memory";
import {
  DEFAULT_MAX_TIMERS,
  type ExecutionRequest,
  type GuestDriver,
  type GuestOutcome,
  GuestScriptCache,
  isolateMemoryParts,
  kernelCacheStatus,
  kernelCodeCache,
  memoryGrownSince,
  type PreparedVmRealm,
  prepareVmRealm,
  readExecutionRequest,
  refusedAllocation,
  startVmExecution,
  TIMER_CREATIONS_PER_PENDING,
  useKernelScript,
} from "@suaveplan/sandbox-guest/realm";
import { discardWorkerStdio } from "./internal/discard-worker-stdio.js";
import { endedByGuest } from "./internal/guest-ending.js";
import { hardenWorkerRealm } from "./internal/harden-worker-realm.js";
import { PRIMITIVE_WARM_UP_REQUEST, WARM_UP_REQUEST } from "./internal/warm-up-request.js";
import type { CodeCacheHook } from "./internal/worker-entry-source.js";
import {
  callMessage,
  type HostMessage,
  readReplyMessage,
  type WorkerMessage,
} from "./internal/worker-message.js";

discardWorkerStdio();
hardenWorkerRealm();

// Every worker of a host names the kernel alike, so one worker's code cache of it serves the
// next. The kernel's text comes from the host too: this entry is built without it.
const { kernelBinding, kernelCache, kernelSource } = (workerData ?? {}) as {
  kernelBinding?: unknown;
  kernelCache?: unknown;
  kernelSource?: unknown;
};
if (typeof kernelBinding === "string")
  useKernelScript({
    binding: kernelBinding,
    cachedData: kernelCache instanceof Uint8Array ? kernelCache : undefined,
    source: typeof kernelSource === "string" ? kernelSource : undefined,
  });

const port = parentPort;
if (port === null) throw new Error("@suaveplan/sandbox-worker: worker-entry must run inside a worker thread");

/** Post to the host; false when the message could not be sent. */
function post(message: WorkerMessage): boolean {
  try {
    port?.postMessage(message);
    return true;
  } catch {
    // Nothing to tell the host with: its backstop deadline ends the run.
    return false;
  }
}

/** The running execution's driver, while one runs. */
let driver: GuestDriver | undefined;
/** The number of the run `driver` serves (replies for any other run are dropped). */
let current = 0;
/** True once a run not marked `reuse` started: the host terminates this worker after it. */
let spent = false;
/** Guest code compiled once per text: on a reused worker, repeated code is not compiled again. */
const scripts = new GuestScriptCache();
/**
 * This worker's memory limit (its heap limits are made from it): each realm's Wasm memory is
 * capped at it, refused at allocation, where node could only sample it (and Node 20 only while
 * the guest yields).
 */
const maxWasmBytes = (workerData as { memoryLimit?: unknown } | null)?.memoryLimit;
const wasmCap = typeof maxWasmBytes === "number" && maxWasmBytes > 0 ? maxWasmBytes : undefined;
/** The next request's fresh context with the kernel installed, made while the worker waits (single-use). */
let prepared: PreparedVmRealm | undefined;

function memoryOutcome(limitBytes: number): GuestOutcome {
  return { kind: "memory", limitBytes };
}

/** A fresh realm for the next run. */
function prepareNext(): void {
  prepared = prepareVmRealm({
    maxTimers: DEFAULT_MAX_TIMERS,
    maxTimerCreations: DEFAULT_MAX_TIMERS * TIMER_CREATIONS_PER_PENDING,
    maxWasmBytes: wasmCap,
  });
}

// `on`, not `once`: the listening port keeps the worker alive until the host terminates it.
port.on("message", (message: HostMessage) => {
  if (typeof message === "string") {
    // A reply. Ignored between runs, for another run and, by the driver, once it ended or for an unknown id.
    const read = readReplyMessage(message);
    if (read !== undefined && read.run === current) driver?.reply(read.reply);
    return;
  }
  if (message?.type !== "run" || driver !== undefined || spent) return;
  const { memoryLimit, reuse } = message;
  current = message.run;
  spent = reuse !== true;
  let request: ExecutionRequest;
  try {
    request = readExecutionRequest(message.request);
  } catch (error) {
    spent = true; // the host retires a worker that faulted
    const why = error instanceof Error ? error.message : String(error);
    post({
      type: "done",
      outcome: { kind: "fault", message: `the worker could not read the run: ${why}` },
      memoryUsed: undefined,
    });
    return;
  }
  const memoryBefore = isolateMemoryParts();
  const running = startVmExecution(request, {
    onLog: (entry) => post({ type: "log", level: entry.level, message: entry.message }),
    // Only a run with host calls has a `tools` global; without it the driver refuses every call.
    onCall:
      request.tools === undefined
        ? undefined
        : (call) => {
            const sent = post(callMessage(call));
            return sent
              ? undefined
              : JSON.stringify({ name: "Error", message: "the host call could not be sent" });
          },
    prepared,
    maxWasmBytes: wasmCap,
    script: scripts.compile(request.code),
    // The host proved the code a bounded pure expression (`straightLine`): no watchdog thread for
    // it; the host's backstop stands behind it anyway.
    watchdog: request.straightLine !== true,
    // One run at a time in this thread: a straight-line one need not wait a macrotask to settle.
    settleAtOnce: true,
    // The first evaluation runs under node's watchdog; timer callbacks and call replies do not
    // (a watchdog thread per entry would cost more than the call): a worker stuck in one does not
    // report, and the host terminates it at the deadline plus its backstop grace.
    callbackWatchdog: false,
  });
  driver = running;
  prepared = undefined;
  // Heap and off-heap memory (array buffers, shared ones, Wasm memory), sampled whenever this
  // thread is free — between the guest's entries, while it waits on a timer or a tool call. A
  // synchronous stretch is sampled by the host instead, where node can (worker.getHeapStatistics).
  let peak = 0;
  const sampler = setInterval(() => {
    const used = memoryGrownSince(memoryBefore);
    if (used > peak) peak = used;
    if (used > memoryLimit) running.abort({ kind: "memory", limitBytes: memoryLimit });
  }, MEMORY_SAMPLE_MS);
  void running.result.then(({ outcome, memoryUsed, cpuMs, toolCalls, toolBytes }) => {
    clearInterval(sampler);
    // One last sample as the run ends: a run that never yielded (where the host cannot sample a
    // busy worker) or ended within one interval of its allocation is held to the limit too.
    const used = Math.max(memoryUsed ?? 0, peak, memoryGrownSince(memoryBefore));
    const held =
      refusedAllocation(outcome) || (used > memoryLimit && endedByGuest(outcome))
        ? memoryOutcome(memoryLimit)
        : outcome;
    post({ type: "done", outcome: held, memoryUsed: used, cpuMs, toolCalls, toolBytes });
    if (spent) return;
    // Ready for the next run without saying so: the host may send it right after `done`, and
    // this port delivers it once this task (the realm's preparation) has finished.
    driver = undefined;
    prepareNext();
  });
});
// A spare compiles and exercises the kernel off the caller's path, then asks for the request; a
// worker started for a caller already waiting asks at once (`warmUp: false`).
const warmUp =
  (workerData as { warmUp?: unknown } | null)?.warmUp === false ? Promise.resolve() : warmUpRun();

/**
 * The warm-up executions: {@link WARM_UP_REQUEST}, its host calls echoed here as the host would
 * answer them, then {@link PRIMITIVE_WARM_UP_REQUEST} as a caller's straight-line run goes.
 */
async function warmUpRun(): Promise<void> {
  const running: GuestDriver = startVmExecution(WARM_UP_REQUEST, {
    onCall: (call) => {
      // Answered in a later task, as a reply from the host arrives.
      setImmediate(() => running.reply({ id: call.id, ok: true, text: call.text }));
      return undefined;
    },
    // As the caller's runs: no watchdog thread for the entries after the first (see below).
    callbackWatchdog: false,
  });
  await running.result;
  await startVmExecution(PRIMITIVE_WARM_UP_REQUEST, {
    watchdog: false,
    settleAtOnce: true,
    callbackWatchdog: false,
  }).result;
}
/** Passed by the loader (`WORKER_LOADER`); absent when the entry runs as plain source (tests). */
declare const __suaveplan_code_cache: CodeCacheHook | undefined;
const cacheHook = typeof __suaveplan_code_cache === "object" ? __suaveplan_code_cache : undefined;
const makeCodeCache = (workerData as { makeCodeCache?: unknown } | null)?.makeCodeCache === true;
void warmUp.then(() => {
  prepareNext();
  // Made after the warm-up, so the functions it ran are in them, and before any guest code ran.
  // Serialised only by the one worker asked to make them.
  const entry = makeCodeCache ? cacheHook?.make() : undefined;
  post({
    type: "ready",
    cacheStatus: { entry: cacheHook?.status ?? "none", kernel: kernelCacheStatus() },
    ...(entry && { caches: { entry, kernel: kernelCodeCache() } }),
  });
});
