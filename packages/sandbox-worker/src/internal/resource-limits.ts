import type { ResourceLimits } from "node:worker_threads";

const MIB = 1024 * 1024;
/** Upper bound for the young generation, in MiB (V8's own default on 64-bit hosts). */
const MAX_YOUNG_GENERATION_MB = 16;

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
