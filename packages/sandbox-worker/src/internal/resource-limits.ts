import type { ResourceLimits } from "node:worker_threads";

const MIB = 1024 * 1024;
/** Upper bound for the young generation, in MiB (V8's own default on 64-bit hosts). */
const MAX_YOUNG_GENERATION_MB = 16;

/**
 * The smallest heap budget a worker is started with, in bytes. Below about
 * 10 MiB a worker cannot boot, and on Node 22 and 24 one started with 2–8 MiB
 * can die of V8's *fatal* out-of-memory ("GC during deserialization") while it
 * boots, which ends the whole process, not only the worker. Smaller budgets
 * are reported as `SANDBOX_MEMORY_EXCEEDED` without starting one.
 */
export const MIN_WORKER_MEMORY_BYTES = 12 * MIB;

/**
 * Split a heap budget (`memoryLimit`, bytes) into V8 worker resource limits:
 * about one eighth (1–16 MiB) for the young generation, the rest for the old
 * generation, so young + old never exceed the budget rounded up to a MiB.
 * Off-heap memory (ArrayBuffer backing stores) is not covered by these limits.
 */
export function resourceLimitsFor(memoryLimitBytes: number): ResourceLimits {
  const totalMb = Math.max(2, Math.ceil(memoryLimitBytes / MIB));
  const youngMb = Math.min(MAX_YOUNG_GENERATION_MB, Math.max(1, Math.floor(totalMb / 8)));
  return { maxOldGenerationSizeMb: totalMb - youngMb, maxYoungGenerationSizeMb: youngMb };
}
