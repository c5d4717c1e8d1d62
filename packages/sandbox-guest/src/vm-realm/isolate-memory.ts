import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";

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
 * The heap in use: the sum of V8's per-space figures, which is
 * `getHeapStatistics().used_heap_size` read without the rest of it. Under a
 * fraction of a microsecond, where `getHeapStatistics` costs 5–45 µs a call
 * in a thread that holds many contexts (the vm engine under load: it also
 * counts the contexts and global handles alive).
 */
export function heapInUse(): number {
  let used = 0;
  for (const space of getHeapSpaceStatistics()) used += space.space_used_size;
  return used;
}

/**
 * V8's external memory: array buffers, typed arrays and Wasm memory, not
 * shared array buffers (see {@link isolateMemoryBytes}). It has no cheaper
 * reading on Node 20 than the whole `getHeapStatistics`.
 */
export function externalMemory(): number {
  return (
    (getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory?: number })
      .external_memory ?? 0
  );
}
