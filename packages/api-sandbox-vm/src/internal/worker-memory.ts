import { getHeapStatistics } from "node:v8";

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
