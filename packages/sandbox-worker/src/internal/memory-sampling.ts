import { Worker } from "node:worker_threads";

/** How often a run's memory is sampled against `memoryLimit`, in ms (inside the worker, and by the host where node can). */
export const MEMORY_SAMPLE_MS = 10;

/**
 * True when this node can read a running worker's heap statistics from the
 * host (`worker.getHeapStatistics()`, node 22.16+ and 24): the read interrupts
 * the worker's thread, so a synchronous stretch of guest code is sampled too.
 */
export const HOST_SAMPLES_WORKERS =
  typeof (Worker.prototype as { getHeapStatistics?: unknown }).getHeapStatistics === "function";

/** The part of `worker.getHeapStatistics()` the host sampler reads (bytes). */
interface WorkerHeap {
  used_heap_size: number;
  external_memory?: number;
}

/**
 * Watch a running worker's memory against `limitBytes` and call `onExceeded`
 * once: where node can ({@link HOST_SAMPLES_WORKERS}) its heap and external
 * memory sampled from the host, and on every line the coarser resident-memory
 * valve, which sees what the guest has touched of one large allocation before
 * the allocation is done. Returns the stop function.
 */
export function watchWorkerMemory(worker: Worker, limitBytes: number, onExceeded: () => void): () => void {
  let exceeded = false;
  const once = () => {
    if (exceeded) return;
    exceeded = true;
    onExceeded();
  };
  const stops = [watchResidentMemory(worker, limitBytes, once)];
  if (HOST_SAMPLES_WORKERS) stops.push(watchWorkerHeap(worker, limitBytes, once));
  return () => {
    for (const stop of stops) stop();
  };
}

/**
 * Sample a running worker's heap and external memory (array buffers, Wasm
 * memory; V8 does not count shared array buffers there) every
 * {@link MEMORY_SAMPLE_MS} from the host, and call `onExceeded` once its growth
 * since the first sample passes `limitBytes`. Returns the stop function; a read
 * that fails (the worker is exiting) ends the watch quietly.
 */
function watchWorkerHeap(worker: Worker, limitBytes: number, onExceeded: () => void): () => void {
  const read = (worker as unknown as { getHeapStatistics(): Promise<WorkerHeap> }).getHeapStatistics;
  let stopped = false;
  let baseline: number | undefined;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    Reflect.apply(read, worker, []).then(
      (heap: WorkerHeap) => {
        if (stopped) return;
        const bytes = heap.used_heap_size + (heap.external_memory ?? 0);
        baseline ??= bytes;
        if (bytes - baseline > limitBytes) {
          stopped = true;
          onExceeded();
          return;
        }
        timer = setTimeout(sample, MEMORY_SAMPLE_MS);
      },
      () => {
        stopped = true;
      },
    );
  };
  sample();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/**
 * Resident memory a watched run may add to the process beyond its `memoryLimit` before the
 * resident-memory watch ends it: the worker's own young generation and code, and a spare
 * worker the engine starts meanwhile.
 */
export const RESIDENT_ALLOWANCE_BYTES = 48 * 1024 * 1024;

/** One run under the resident-memory watch. */
interface ResidentWatch {
  worker: Worker;
  limitBytes: number;
  /** The process's resident memory when the watch began. */
  startBytes: number;
  /** The worker's event-loop idle time at the last sample (ms). */
  idleMs: number;
  onExceeded: () => void;
}

const residentWatches = new Set<ResidentWatch>();
let residentTimer: NodeJS.Timeout | undefined;

/**
 * A safety valve for what the worker's own sampler cannot see — array buffers
 * taken by guest code that never yields (node 20 cannot read a busy worker's
 * memory at all; node 22.16+/24 count one large allocation only once it is
 * whole): every {@link MEMORY_SAMPLE_MS} the host reads the process's
 * resident memory, and ends a run when the process grew since the run began by
 * more than every watched run may hold together (each its limit plus
 * {@link RESIDENT_ALLOWANCE_BYTES}) while the run's worker was busy the whole
 * interval (its event loop never went idle: no yield, so its own sampler ran
 * not). A run that yields is left to its worker's exact sampler; memory the
 * host application itself takes meanwhile counts too, hence the allowance.
 */
function watchResidentMemory(worker: Worker, limitBytes: number, onExceeded: () => void): () => void {
  let idleMs: number;
  try {
    idleMs = worker.performance.eventLoopUtilization().idle;
  } catch {
    return () => {};
  }
  const watch: ResidentWatch = {
    worker,
    limitBytes,
    startBytes: process.memoryUsage.rss(),
    idleMs,
    onExceeded,
  };
  residentWatches.add(watch);
  residentTimer ??= setInterval(sampleResidentMemory, MEMORY_SAMPLE_MS).unref();
  return () => {
    residentWatches.delete(watch);
    if (residentWatches.size === 0) {
      clearInterval(residentTimer);
      residentTimer = undefined;
    }
  };
}

function sampleResidentMemory(): void {
  const residentBytes = process.memoryUsage.rss();
  let allowedBytes = 0;
  for (const watch of residentWatches) allowedBytes += watch.limitBytes + RESIDENT_ALLOWANCE_BYTES;
  for (const watch of [...residentWatches]) {
    let idleMs: number;
    try {
      idleMs = watch.worker.performance.eventLoopUtilization().idle;
    } catch {
      residentWatches.delete(watch);
      continue;
    }
    const busy = idleMs === watch.idleMs;
    watch.idleMs = idleMs;
    if (busy && residentBytes - watch.startBytes > allowedBytes) {
      residentWatches.delete(watch);
      watch.onExceeded();
    }
  }
  if (residentWatches.size === 0) {
    clearInterval(residentTimer);
    residentTimer = undefined;
  }
}
