import { getHeapStatistics } from "node:v8";
import type { Worker } from "node:worker_threads";

/** How often the plugin worker's memory is sampled against `memoryLimitMb`, in ms (from the host, where node can). */
export const MEMORY_SAMPLE_MS = 10;

/**
 * Bytes the current thread's V8 isolate holds: the heap in use plus its
 * off-heap memory (array buffers, shared array buffers, Wasm memory). V8's
 * external memory counts array buffers and Wasm memory, node's `arrayBuffers`
 * array buffers and shared ones; the larger of the two is taken.
 */
export function threadMemoryBytes(): number {
  const heap = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory?: number };
  return heap.used_heap_size + Math.max(heap.external_memory ?? 0, process.memoryUsage().arrayBuffers);
}

interface WorkerHeap {
  used_heap_size: number;
  external_memory?: number;
}

/**
 * Sample a worker's heap and external memory from the host every
 * {@link MEMORY_SAMPLE_MS} (`worker.getHeapStatistics()`, node 22.16+ and 24:
 * it interrupts the worker, so code that runs without yielding is sampled
 * too) and call `onExceeded` once with the bytes, the first time their growth
 * since the first sample passes `limitBytes`. A no-op where node cannot.
 * Returns the stop function.
 */
export function watchWorkerMemory(
  worker: Worker,
  limitBytes: number,
  onExceeded: (grownBytes: number) => void,
): () => void {
  const read = (worker as unknown as { getHeapStatistics?: () => Promise<WorkerHeap> }).getHeapStatistics;
  if (typeof read !== "function") return () => {};
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
