import { afterEach, describe, expect, it } from "vitest";
import { SparePool } from "./spare-pool.js";

/** A spare as an engine would keep one: booting until told otherwise, alive until it dies or is retired. */
interface Spare {
  id: number;
  heap: number;
  ready: boolean;
  alive: boolean;
}

const pools: SparePool<Spare>[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.close();
});

function makePool(options: {
  maxSpares: number;
  windowMs?: number;
  spacingMs?: number;
  signalsReady?: boolean;
}) {
  const started: Spare[] = [];
  const retired: number[] = [];
  let heap = 1;
  const pool = new SparePool<Spare>(
    {
      start: () => {
        const spare = { id: started.length, heap, ready: options.signalsReady !== true, alive: true };
        started.push(spare);
        return spare;
      },
      retire: (spare) => {
        spare.alive = false;
        retired.push(spare.id);
      },
      alive: (spare) => spare.alive,
      ...(options.signalsReady === true ? { booting: (spare: Spare) => !spare.ready } : {}),
    },
    options,
  );
  pools.push(pool);
  return { pool, started, retired, setHeap: (n: number) => (heap = n) };
}

const until = async (check: () => boolean, ms = 2_000) => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  return check();
};
const ids = (spares: readonly Spare[]) => spares.map((spare) => spare.id);

describe("SparePool", () => {
  it("keeps one spare with no demand, and as many as the widest burst after one", async () => {
    const { pool, started } = makePool({ maxSpares: 4 });
    pool.refillAfter(0);
    expect(await until(() => started.length === 1)).toBe(true);
    // A burst of three: the one spare serves the first run, the engine starts the others cold.
    expect(pool.take(() => true)?.id).toBe(0);
    expect(pool.take(() => true)).toBeUndefined();
    for (let i = 0; i < 3; i++) pool.started();
    for (let i = 0; i < 3; i++) pool.ended();
    pool.refillAfter(0);
    expect(await until(() => pool.list.length === 3)).toBe(true);
    expect(ids(pool.list)).toEqual([1, 2, 3]);
  });

  it("boots the next only once the last is ready, when spares say so", async () => {
    const { pool, started } = makePool({ maxSpares: 4, signalsReady: true });
    for (let i = 0; i < 3; i++) pool.started();
    pool.refillAfter(0);
    expect(await until(() => started.length === 1)).toBe(true);
    pool.refillAfter(0);
    await new Promise((r) => setTimeout(r, 30));
    expect(started.length).toBe(1);
    (started[0] as Spare).ready = true;
    pool.refillAfter(0);
    expect(await until(() => started.length === 2)).toBe(true);
  });

  it("spaces starts by spacingMs", async () => {
    const { pool, started } = makePool({ maxSpares: 2, spacingMs: 150 });
    pool.started();
    pool.started();
    pool.refillAfter(0);
    expect(await until(() => started.length === 1)).toBe(true);
    const first = performance.now();
    expect(await until(() => started.length === 2)).toBe(true);
    expect(performance.now() - first).toBeGreaterThanOrEqual(100);
  });

  it("takes the oldest accepted spare, preferring the preferred, and drops dead ones", async () => {
    const { pool, started } = makePool({ maxSpares: 3 });
    for (let i = 0; i < 3; i++) pool.started();
    pool.refillAfter(0);
    expect(await until(() => started.length === 3)).toBe(true);
    (started[0] as Spare).alive = false;
    (started[1] as Spare).ready = false;
    expect(
      pool.take(
        () => true,
        (spare) => spare.ready,
      )?.id,
    ).toBe(2);
    expect(
      pool.take(
        () => true,
        (spare) => spare.ready,
      )?.id,
    ).toBe(1);
    expect(pool.take(() => true)).toBeUndefined();
  });

  it("discards the spares a run can no longer use, retiring them", async () => {
    const { pool, started, retired, setHeap } = makePool({ maxSpares: 2 });
    pool.started();
    pool.started();
    pool.refillAfter(0);
    expect(await until(() => started.length === 2)).toBe(true);
    setHeap(2);
    pool.discard((spare) => spare.heap !== 2);
    expect(retired).toEqual([1, 0]);
    expect(pool.list).toEqual([]);
  });

  it("retires the newest extra spares when the bursts stop", async () => {
    const { pool, started, retired } = makePool({ maxSpares: 4, windowMs: 100 });
    for (let i = 0; i < 3; i++) pool.started();
    for (let i = 0; i < 3; i++) pool.ended();
    pool.refillAfter(0);
    expect(await until(() => started.length === 3)).toBe(true);
    expect(await until(() => pool.list.length === 1, 3_000)).toBe(true);
    expect(ids(pool.list)).toEqual([0]);
    expect(retired).toEqual([2, 1]);
  });

  it("starts none with maxSpares 0, and none after close, which hands the spares back", async () => {
    const none = makePool({ maxSpares: 0 });
    none.pool.started();
    none.pool.refillAfter(0);
    await new Promise((r) => setTimeout(r, 30));
    expect(none.started).toEqual([]);

    const { pool, started, retired } = makePool({ maxSpares: 2 });
    pool.refillAfter(0);
    expect(await until(() => started.length === 1)).toBe(true);
    expect(ids(pool.close())).toEqual([0]);
    expect(pool.close()).toEqual([]);
    pool.started();
    pool.refillAfter(0);
    await new Promise((r) => setTimeout(r, 30));
    expect(started.length).toBe(1);
    expect(retired).toEqual([]);
  });
});
