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
  const { heap, offHeap } = isolateMemoryParts();
  return heap + offHeap;
}

/** What {@link isolateMemoryBytes} adds up, apart: the heap in use and the off-heap memory. */
export function isolateMemoryParts(): { heap: number; offHeap: number } {
  const heap = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory?: number };
  const { arrayBuffers } = process.memoryUsage();
  return { heap: heap.used_heap_size, offHeap: Math.max(heap.external_memory ?? 0, arrayBuffers) };
}

/**
 * How much the isolate grew since `before` (an {@link isolateMemoryParts}
 * reading), each part on its own: a collection of garbage older than the run
 * must not hide the buffers the run holds (it did, by 33 KB of 32 MiB, in a
 * worker that compiled the kernel during the run).
 */
export function memoryGrownSince(before: { heap: number; offHeap: number }): number {
  const now = isolateMemoryParts();
  return Math.max(0, now.heap - before.heap) + Math.max(0, now.offHeap - before.offHeap);
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
