export {
  HOST_SAMPLES_WORKERS,
  MEMORY_SAMPLE_MS,
  type OnMemoryExceeded,
  RESIDENT_ALLOWANCE_BYTES,
  watchResidentMemory,
  watchWorkerHeap,
  watchWorkerMemory,
} from "./watch-worker-memory.js";
