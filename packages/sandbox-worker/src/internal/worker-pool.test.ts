import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import type { HostCalls } from "@suaveplan/sandbox-core/types";
import {
  buildExecutionRequest,
  createHostCodec,
  type GuestOutcome,
  ModuleRegistry,
} from "@suaveplan/sandbox-guest";
import { afterEach, describe, expect, it } from "vitest";
import { replyMessage } from "./worker-message.js";
import { mayReuse, type ReuseSettings, WorkerPool } from "./worker-pool.js";
import { type RunEnd, WorkerRun } from "./worker-run.js";
import { startWorkerThread, type WorkerThread } from "./worker-thread.js";

// Real worker threads on the built entry (dist/worker-entry.cjs): the pool's
// promise is that a worker serves runs in turn, each in a fresh context, and is
// retired when a run did not end as the guest's own doing.

const MIB = 1024 * 1024;
const LIMITS = parseEngineLimits({ timeout: 2_000, memoryLimit: 64 * MIB });
const codec = createHostCodec();

const pools: WorkerPool[] = [];
const threads: WorkerThread[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) pool.close();
  await Promise.all(threads.splice(0).map((thread) => thread.worker.terminate()));
});

/** A pool of real workers that records every worker it starts. */
function makePool(settings: ReuseSettings): { pool: WorkerPool; started: WorkerThread[] } {
  const started: WorkerThread[] = [];
  const pool = new WorkerPool(
    LIMITS.memoryLimit,
    settings,
    (memoryLimit, onExit, warmUp) => {
      const thread = startWorkerThread(memoryLimit, onExit, undefined, warmUp);
      started.push(thread);
      threads.push(thread);
      return thread;
    },
    (thread) => void thread.worker.terminate(),
  );
  pools.push(pool);
  return { pool, started };
}

/** Run `code` on a worker of `pool` the way the engine does, releasing it when the run ends. */
async function runOn(
  pool: WorkerPool,
  code: string,
  options: { timeout?: number; hostCalls?: HostCalls; onStart?: (thread: WorkerThread) => void } = {},
): Promise<{ thread: WorkerThread; end: RunEnd; value: unknown }> {
  const built = buildExecutionRequest(
    code,
    undefined,
    { timeout: options.timeout, hostCalls: options.hostCalls },
    LIMITS,
    new ModuleRegistry(),
  );
  if (!built.ok) throw new Error(JSON.stringify(built.result));
  const thread = await pool.acquire();
  if (thread === undefined) throw new Error("the pool gave no worker");
  options.onStart?.(thread);
  const run = new WorkerRun(
    thread,
    built.request,
    undefined,
    (ended, reported, outcome) => pool.release(ended, reported, outcome),
    10_000,
    built.hostCalls,
    true,
  );
  const end = await run.result;
  return { thread, end, value: end.outcome.kind === "value" ? codec.decode(end.outcome.text) : undefined };
}

describe("WorkerPool", () => {
  it("serves runs in turn on one worker, each in a fresh context", async () => {
    const { pool, started } = makePool({ workers: 1, runsPerWorker: 100 });
    const code =
      "globalThis.n = (globalThis.n ?? 0) + 1; [n, typeof globalThis.left]; globalThis.left = 1; n";
    const runs = [];
    for (let i = 0; i < 4; i++) runs.push(await runOn(pool, code));
    expect(runs.map((run) => run.value)).toEqual([1, 1, 1, 1]);
    expect(runs.map((run) => run.thread.runs)).toEqual([4, 4, 4, 4]);
    expect(started).toHaveLength(1);
    expect(new Set(runs.map((run) => run.thread)).size).toBe(1);
  });

  it("retires a worker whose run timed out and starts its replacement at once", async () => {
    const { pool, started } = makePool({ workers: 1, runsPerWorker: 100 });
    const stuck = await runOn(pool, "while (true) {}", { timeout: 100 });
    expect(stuck.end.outcome).toEqual({ kind: "timeout", timeoutMs: 100 });
    // The replacement is booting before anyone asks for it.
    expect(started).toHaveLength(2);
    const next = await runOn(pool, "6 * 7");
    expect(next.value).toBe(42);
    expect(next.thread).toBe(started[1]);
    expect(next.thread).not.toBe(stuck.thread);
  });

  it("keeps a worker after a guest throw and replaces it after runsPerWorker runs", async () => {
    const { pool, started } = makePool({ workers: 1, runsPerWorker: 3 });
    const first = await runOn(pool, "throw new TypeError('boom')");
    expect(first.end.outcome.kind).toBe("error");
    await runOn(pool, "1");
    const third = await runOn(pool, "2");
    expect([third.thread, started.length]).toEqual([first.thread, 2]);
    const fourth = await runOn(pool, "3");
    expect(fourth.value).toBe(3);
    expect(fourth.thread).toBe(started[1]);
  });

  it("starts workers up to its size, then has callers wait in line, first come first served", async () => {
    const { pool, started } = makePool({ workers: 2, runsPerWorker: 100 });
    const order: string[] = [];
    const slow = (name: string) =>
      runOn(pool, `await new Promise((done) => setTimeout(done, 150)); ${JSON.stringify(name)}`).then(
        (run) => {
          order.push(String(run.value));
          return run;
        },
      );
    const busy = [slow("a"), slow("b")];
    await new Promise((resolve) => setTimeout(resolve, 20));
    const waiting = [runOn(pool, "'c'"), runOn(pool, "'d'")];
    const ends = await Promise.all([...busy, ...waiting]);
    expect(started).toHaveLength(2);
    expect(ends.map((run) => run.value)).toEqual(["a", "b", "c", "d"]);
    expect(order.slice(0, 2).sort()).toEqual(["a", "b"]);
    expect(pool.size).toBe(2);
  });

  it("takes an aborted caller out of line and hands callers in line nothing once closed", async () => {
    const { pool } = makePool({ workers: 1, runsPerWorker: 100 });
    const held = await pool.acquire();
    const controller = new AbortController();
    const aborted = pool.acquire(controller.signal);
    const closedOut = pool.acquire();
    controller.abort();
    expect(await aborted).toBeUndefined();
    pool.close();
    expect(await closedOut).toBeUndefined();
    expect(await pool.acquire()).toBeUndefined();
    expect(held).toBeDefined();
  });

  it("never lets a reply meant for an earlier run reach a later run on the same worker", async () => {
    const { pool } = makePool({ workers: 1, runsPerWorker: 100 });
    const tools = (answer: (input: unknown) => Promise<unknown>): HostCalls => ({
      names: ["ask"],
      call: async (_name, input) => answer(input),
    });
    // Run 1 asks once (call id 1). A run waits for its pending calls, so a reply of an earlier
    // run can only come late through the transport: here, sent again while run 2 waits.
    const first = await runOn(pool, "await tools.ask('first')", {
      hostCalls: tools(async () => "answer of run 1"),
    });
    expect(first.value).toBe("answer of run 1");
    // Run 2's first call has id 1 too; a late reply of run 1 arrives while it waits.
    const second = await runOn(pool, "await tools.ask('second')", {
      hostCalls: tools(async () => {
        first.thread.worker.postMessage(
          replyMessage(first.thread.runs - 1, {
            id: 1,
            ok: true,
            text: codec.encode("stale answer of run 1", "output", MIB),
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        return "answer of run 2";
      }),
    });
    expect(second.thread).toBe(first.thread);
    expect(second.value).toBe("answer of run 2");
  });
});

describe("mayReuse", () => {
  it.each<[GuestOutcome["kind"], boolean, boolean]>([
    ["value", true, true],
    ["error", true, true],
    ["syntax", true, true],
    ["untransferable", true, true],
    ["value", false, false],
    ["timeout", true, false],
    ["memory", true, false],
    ["cancelled", true, false],
    ["disposed", true, false],
    ["fault", true, false],
  ])("an outcome %s (reported by the worker: %s) keeps the worker: %s", (kind, reported, kept) => {
    expect(mayReuse(reported, { kind } as GuestOutcome)).toBe(kept);
  });
});
