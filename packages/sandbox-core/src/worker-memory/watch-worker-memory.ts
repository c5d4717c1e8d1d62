import { Worker } from "node:worker_threads";

/** How often a worker's memory is sampled against its limit, in ms (inside the worker, and by the host where node can). */
export const MEMORY_SAMPLE_MS = 10;

/**
 * True when this node can read a running worker's heap statistics from the
 * host (`worker.getHeapStatistics()`, node 22.16+ and 24): the read interrupts
 * the worker's thread, so a synchronous stretch of guest code is sampled too.
 */
export const HOST_SAMPLES_WORKERS =
  typeof (Worker.prototype as { getHeapStatistics?: unknown }).getHeapStatistics === "function";

/**
 * Resident memory a watched worker may add to the process beyond its limit before the
 * resident-memory valve ends it: the worker's own young generation and code, and a spare
 * worker started meanwhile.
 */
export const RESIDENT_ALLOWANCE_BYTES = 48 * 1024 * 1024;

/** Called once when a watch ends a worker: by how many bytes it grew (the heap sampler's or the process's figure). */
export type OnMemoryExceeded = (grownBytes: number) => void;

/**
 * Watch a running worker's memory against `limitBytes` and call `onExceeded`
 * once: where node can ({@link HOST_SAMPLES_WORKERS}) its heap and external
 * memory sampled from the host, and on every line the coarser resident-memory
 * valve, which also sees what guest code that never yields has touched.
 * Returns the stop function (idempotent).
 */
export function watchWorkerMemory(
  worker: Worker,
  limitBytes: number,
  onExceeded: OnMemoryExceeded,
): () => void {
  let exceeded = false;
  const once: OnMemoryExceeded = (grownBytes) => {
    if (exceeded) return;
    exceeded = true;
    onExceeded(grownBytes);
  };
  const stops = [watchResidentMemory(worker, limitBytes, once), watchWorkerHeap(worker, limitBytes, once)];
  return () => {
    for (const stop of stops) stop();
  };
}

/** The part of `worker.getHeapStatistics()` the host sampler reads (bytes). */
interface WorkerHeap {
  used_heap_size: number;
  external_memory?: number;
}

/**
 * Sample a running worker's heap and external memory (array buffers, Wasm
 * memory; V8 does not count shared array buffers there) every
 * {@link MEMORY_SAMPLE_MS} from the host, and call `onExceeded` once its growth
 * since the first sample passes `limitBytes`. A read that fails (the worker is
 * exiting) ends the watch quietly; a no-op where node cannot ({@link HOST_SAMPLES_WORKERS}).
 * Returns the stop function (idempotent).
 */
export function watchWorkerHeap(
  worker: Worker,
  limitBytes: number,
  onExceeded: OnMemoryExceeded,
): () => void {
  if (!HOST_SAMPLES_WORKERS) return () => {};
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
          onExceeded(bytes - baseline);
          return;
        }
        timer = setTimeout(sample, MEMORY_SAMPLE_MS);
        timer.unref();
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

/** One worker under the resident-memory valve. */
interface ResidentWatch {
  worker: Worker;
  limitBytes: number;
  /** The process's resident memory when the watch began. */
  startBytes: number;
  /** The worker's event-loop idle time at the last sample (ms). */
  idleMs: number;
  /** Samples in a row at which that idle time had not moved. */
  stillSamples: number;
  onExceeded: OnMemoryExceeded;
}

/**
 * Readings in a row without idle time that make a worker busy: a worker that yields can still run
 * one synchronous stretch longer than an interval (filling an 8 MiB buffer took more than 10 ms
 * here), and one reading would take it for a worker that never yields.
 */
const BUSY_SAMPLES = 3;

const residentWatches = new Set<ResidentWatch>();
let residentTimer: NodeJS.Timeout | undefined;

/** Ends a watch; the shared timer stops with the last one. */
function forget(watch: ResidentWatch): void {
  residentWatches.delete(watch);
  if (residentWatches.size === 0 && residentTimer !== undefined) {
    clearInterval(residentTimer);
    residentTimer = undefined;
  }
}

/**
 * A safety valve for what a worker's own sampler cannot see — array buffers
 * taken by guest code that never yields (node 20 cannot read a busy worker's
 * memory at all; node 22.16+/24 count one large allocation only once it is
 * whole): every {@link MEMORY_SAMPLE_MS} the host reads the process's
 * resident memory, and ends a watch when the process grew since it began by
 * more than every watched worker may hold together (each its limit plus
 * {@link RESIDENT_ALLOWANCE_BYTES}) while its worker was busy for
 * {@link BUSY_SAMPLES} intervals in a row (its event loop never went idle: no
 * yield, so its own sampler ran not). A worker that yields is left to its exact sampler; memory the host
 * application itself takes meanwhile counts too, hence the allowance — and
 * hence a watch should span one run or call, not a worker's whole life.
 * Returns the stop function (idempotent).
 */
export function watchResidentMemory(
  worker: Worker,
  limitBytes: number,
  onExceeded: OnMemoryExceeded,
): () => void {
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
    stillSamples: 0,
    onExceeded,
  };
  residentWatches.add(watch);
  residentTimer ??= setInterval(sampleResidentMemory, MEMORY_SAMPLE_MS).unref();
  return () => forget(watch);
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
      forget(watch);
      continue;
    }
    watch.stillSamples = idleMs === watch.idleMs ? watch.stillSamples + 1 : 0;
    watch.idleMs = idleMs;
    if (watch.stillSamples >= BUSY_SAMPLES && residentBytes - watch.startBytes > allowedBytes) {
      forget(watch);
      watch.onExceeded(residentBytes - watch.startBytes);
    }
  }
}
