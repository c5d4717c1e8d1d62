import { setTimeout as sleep } from "node:timers/promises";

/** Median of `samples` (ms). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/**
 * Latency as an interactive caller sees it: wait `idleMs` before each call
 * (background work such as a pre-started worker may finish meanwhile), then
 * time one call. Returns the median in ms.
 */
export async function latencyMedian(
  call: () => Promise<unknown>,
  iterations: number,
  idleMs: number,
): Promise<number> {
  for (let i = 0; i < Math.min(5, iterations); i++) await call(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    await sleep(idleMs);
    const start = performance.now();
    await call();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** Back-to-back throughput with `concurrency` callers sharing `total` calls. Returns calls per second. */
export async function throughput(
  call: () => Promise<unknown>,
  total: number,
  concurrency: number,
): Promise<number> {
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await call();
      }
    }),
  );
  return (total / (performance.now() - start)) * 1000;
}
