import { afterEach, expect, it } from "vitest";
import { entryCodeCache } from "./worker-entry-source.js";
import { startWorkerThread, type WorkerThread } from "./worker-thread.js";

// Real worker threads on the built entry (dist/worker-entry.cjs).

const MIB = 1024 * 1024;
const threads: WorkerThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((thread) => thread.worker.terminate()));
});

/** Start a worker on the built entry and wait for its `ready`. */
function ready(warmUp: boolean): Promise<WorkerThread> {
  return new Promise((resolve, reject) => {
    const thread = startWorkerThread(32 * MIB, () => {}, undefined, warmUp);
    threads.push(thread);
    thread.listener = {
      onReady: () => resolve(thread),
      onEvent: () => {},
      onError: reject,
      onExit: (code) => reject(new Error(`the worker exited (${code}) before it was ready`)),
    };
  });
}

it("the first warmed worker makes the entry's code cache and later workers compile from it", async () => {
  expect(entryCodeCache()).toBeUndefined();
  const cold = await ready(false);
  // Only a warmed worker makes the cache: one that skipped its warm-up would leave its functions out.
  expect({ status: cold.cacheStatus, cache: entryCodeCache() }).toEqual({ status: "none", cache: undefined });
  const first = await ready(true);
  const cache = entryCodeCache();
  const second = await ready(false);
  expect({
    first: first.cacheStatus,
    cacheBytes: (cache?.byteLength ?? 0) > 1024,
    second: second.cacheStatus,
    // One cache per process: the second worker did not replace it.
    same: entryCodeCache() === cache,
  }).toEqual({ first: "none", cacheBytes: true, second: "accepted", same: true });
});
