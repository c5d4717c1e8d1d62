import type { SandboxEngine } from "@suaveplan/sandbox-core/types";
import { makeRawPrimitive } from "./engine-bench.js";
import { median } from "./internal/measure.js";

/** Bursts of concurrent calls after an idle spell, on an engine with fresh state per call. */
export interface BurstBenchRow {
  engine: "worker" | "spawn";
  /** Calls in each burst, all at once. */
  width: number;
  /** Median latency of a call in a burst, with spares following demand (the default), ms. */
  followingMs: number;
  /** The same with one spare (`maxSpares: 1`, the engines' behaviour before spares followed demand), ms. */
  oneSpareMs: number;
  /** The same for the raw primitive (a cold start per call), ms. */
  rawMs: number;
  primitive: string;
  skipped?: string;
}

const WIDTH = 4;
/** Long enough for four spares to boot one after another (worker) or 100 ms apart (spawn). */
const IDLE_MS = { worker: 700, spawn: 900 } as const;

/** Median latency of each call of `bursts` bursts of `WIDTH` calls, `idleMs` apart; the first burst only warms up. */
async function burstMedian(call: () => Promise<unknown>, bursts: number, idleMs: number): Promise<number> {
  const samples: number[] = [];
  for (let b = 0; b <= bursts; b++) {
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const latencies = await Promise.all(
      Array.from({ length: WIDTH }, async () => {
        const start = performance.now();
        await call();
        return performance.now() - start;
      }),
    );
    if (b > 0) samples.push(...latencies);
  }
  return median(samples);
}

async function withEngine(engine: SandboxEngine, bursts: number, idleMs: number): Promise<number> {
  try {
    return await burstMedian(
      async () => {
        const result = await engine.execute("2 + 3");
        if (!result.success || result.result !== 5)
          throw new Error(`${engine.name} returned ${JSON.stringify(result)}`);
      },
      bursts,
      idleMs,
    );
  } finally {
    await engine.destroy();
  }
}

/**
 * Bursts of four concurrent `execute("2 + 3")` after an idle spell, on the
 * worker and spawn engines: with spares following demand (the default), with
 * one spare (`maxSpares: 1`), and the raw cold start per call, in the same run.
 */
export async function runBurstBench(options: {
  bursts: number;
  onRow?: (row: BurstBenchRow) => void;
}): Promise<BurstBenchRow[]> {
  const rows: BurstBenchRow[] = [];
  for (const name of ["worker", "spawn"] as const) {
    const make = async (maxSpares?: number): Promise<SandboxEngine> =>
      name === "worker"
        ? new (await import("@suaveplan/sandbox/worker-engine")).WorkerEngine(
            maxSpares === undefined ? {} : { maxSpares },
          )
        : new (await import("@suaveplan/sandbox/spawn-engine")).SpawnEngine(
            maxSpares === undefined ? {} : { maxSpares },
          );
    const raw = await makeRawPrimitive(name);
    let row: BurstBenchRow;
    try {
      const followingMs = await withEngine(await make(), options.bursts, IDLE_MS[name]);
      const oneSpareMs = await withEngine(await make(1), options.bursts, IDLE_MS[name]);
      const rawMs = await burstMedian(raw.call, options.bursts, IDLE_MS[name]);
      row = { engine: name, width: WIDTH, followingMs, oneSpareMs, rawMs, primitive: raw.primitive };
    } catch (error) {
      row = {
        engine: name,
        width: WIDTH,
        followingMs: Number.NaN,
        oneSpareMs: Number.NaN,
        rawMs: Number.NaN,
        primitive: raw.primitive,
        skipped: error instanceof Error ? error.message : String(error),
      };
    } finally {
      raw.close();
    }
    rows.push(row);
    options.onRow?.(row);
  }
  return rows;
}

/** Render rows as a Markdown table. */
export function formatBurstTable(rows: readonly BurstBenchRow[]): string {
  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "–");
  return [
    "| engine | burst | spares follow demand, median (ms) | one spare, median (ms) | raw cold start, median (ms) | raw primitive |",
    "| --- | ---: | ---: | ---: | ---: | --- |",
    ...rows.map((r) =>
      r.skipped
        ? `| ${r.engine} | ${r.width} at once | skipped: ${r.skipped} | | | ${r.primitive} |`
        : `| ${r.engine} | ${r.width} at once | ${fmt(r.followingMs)} | ${fmt(r.oneSpareMs)} | ${fmt(r.rawMs)} | ${r.primitive} |`,
    ),
  ].join("\n");
}
