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
 * Sample a running worker's heap and external memory (array buffers, Wasm
 * memory; V8 does not count shared array buffers there) every
 * {@link MEMORY_SAMPLE_MS} from the host, and call `onExceeded` once its growth
 * since the first sample passes `limitBytes`. A no-op where node cannot
 * ({@link HOST_SAMPLES_WORKERS}). Returns the stop function; a read that fails
 * (the worker is exiting) ends the watch quietly.
 */
export function watchWorkerMemory(worker: Worker, limitBytes: number, onExceeded: () => void): () => void {
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
