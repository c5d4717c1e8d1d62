import { afterEach, expect, it } from "vitest";
import { WorkerEngine } from "../worker-engine/worker-engine.js";
import { workerCodeCaches } from "./worker-entry-source.js";
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

const NONE = { entry: "none", kernel: "none" };

it("the first warmed worker makes the code caches of the entry and the kernel, and later workers compile from them", async () => {
  expect(workerCodeCaches()).toBeUndefined();
  const cold = await ready(false);
  // Only a warmed worker makes them: one that skipped its warm-up would leave its functions out.
  expect({ status: cold.cacheStatus, caches: workerCodeCaches() }).toEqual({
    status: NONE,
    caches: undefined,
  });
  const first = await ready(true);
  const caches = workerCodeCaches();
  const second = await ready(false);
  expect({
    first: first.cacheStatus,
    bytes: [(caches?.entry.byteLength ?? 0) > 1024, (caches?.kernel.byteLength ?? 0) > 1024],
    second: second.cacheStatus,
    // One pair per process: the second worker did not replace it.
    same: workerCodeCaches() === caches,
  }).toEqual({
    first: NONE,
    bytes: [true, true],
    second: { entry: "accepted", kernel: "accepted" },
    same: true,
  });
});

it("a worker compiled from the caches runs guest code: the kernel it runs has the binding its cache was made with", async () => {
  const engine = new WorkerEngine({ timeout: 2_000 });
  try {
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await engine.execute("[1, 2].map((n) => n * 2)"));
    expect(results.map((r) => [r.success, r.result])).toEqual([
      [true, [2, 4]],
      [true, [2, 4]],
      [true, [2, 4]],
    ]);
    expect(workerCodeCaches()).toBeDefined();
  } finally {
    await engine.destroy();
  }
});
