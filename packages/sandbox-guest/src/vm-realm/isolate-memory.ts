import { getHeapStatistics } from "node:v8";

/**
 * Bytes the current thread's V8 isolate holds for JavaScript: the heap in use
 * plus its off-heap memory — array buffers and typed arrays, shared array
 * buffers, Wasm memory, external strings. V8's external memory counts array
 * buffers and Wasm memory but not shared array buffers; node's `arrayBuffers`
 * counts array buffers and shared ones but not Wasm memory; the larger of the
 * two is taken (so a mix of shared buffers and Wasm memory is counted at
 * least as its larger part). Costs a few microseconds (it reads the heap
 * statistics and node's memory usage).
 */
export function isolateMemoryBytes(): number {
  const heap = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory?: number };
  const { arrayBuffers } = process.memoryUsage();
  return heap.used_heap_size + Math.max(heap.external_memory ?? 0, arrayBuffers);
}

/**
 * The heap in use and V8's external memory (array buffers, typed arrays, Wasm
 * memory; not shared array buffers), apart: what {@link isolateMemoryBytes}
 * counts without node's memory usage, which reads the process's resident size
 * from the OS (several microseconds; this is a fraction of one). For the
 * per-run `memoryUsed` figure, read twice per execution.
 */
export function heapAndExternal(): { heap: number; external: number } {
  const heap = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory?: number };
  return { heap: heap.used_heap_size, external: heap.external_memory ?? 0 };
}
