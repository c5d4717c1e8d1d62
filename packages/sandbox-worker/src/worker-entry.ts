/**
 * The worker side of `WorkerEngine`: a transport and nothing more. Built as a
 * self-contained script (`dist/worker-entry.cjs`, the shared guest runtime
 * bundled in) whose text is passed to `new Worker(source, { eval: true })`.
 * It warms the kernel up, posts `ready`, takes exactly one `ExecutionRequest`,
 * runs it with the shared driver on a `node:vm` realm (`startVmExecution`),
 * streams each console line as a `log` event and ends with one `done` event.
 * The host terminates the worker afterwards; workers are never reused.
 */
import { parentPort } from "node:worker_threads";
import {
  DEFAULT_MAX_TIMERS,
  type ExecutionRequest,
  type PreparedVmRealm,
  prepareVmRealm,
  startVmExecution,
  TIMER_CREATIONS_PER_PENDING,
} from "@suaveplan/sandbox-guest";
import { hardenWorkerRealm } from "./internal/harden-worker-realm.js";
import { WARM_UP_REQUEST } from "./internal/warm-up-request.js";
import type { WorkerMessage } from "./internal/worker-message.js";

hardenWorkerRealm();

const port = parentPort;
if (port === null) throw new Error("@suaveplan/sandbox-worker: worker-entry must run inside a worker thread");

function post(message: WorkerMessage): void {
  try {
    port?.postMessage(message);
  } catch {
    // Nothing to tell the host with: its backstop deadline ends the run.
  }
}

let started = false;
/** The request's fresh context with the kernel installed, made while the worker waits (single-use). */
let prepared: PreparedVmRealm | undefined;
// `on`, not `once`: the listening port keeps the worker alive until the host terminates it.
port.on("message", (request: ExecutionRequest) => {
  if (started) return;
  started = true;
  const driver = startVmExecution(request, {
    onLog: (entry) => post({ type: "log", level: entry.level, message: entry.message }),
    prepared,
  });
  prepared = undefined;
  void driver.result.then(({ outcome, memoryUsed }) => post({ type: "done", outcome, memoryUsed }));
});
// Compile and exercise the kernel off the caller's path, then ask for the request.
void startVmExecution(WARM_UP_REQUEST).result.then(() => {
  prepared = prepareVmRealm({
    maxTimers: DEFAULT_MAX_TIMERS,
    maxTimerCreations: DEFAULT_MAX_TIMERS * TIMER_CREATIONS_PER_PENDING,
  });
  post({ type: "ready" });
});
