import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { latencyMedian, throughput } from "./internal/measure.js";

/** The worker reuse tier against a pool of reused workers without fresh state, in the same run. */
export interface ReuseBenchRow {
  tier: string;
  primitive: string;
  /** Worker threads on each side. */
  workers: number;
  /** Median latency of `execute("2 + 3")` after a 5 ms idle gap, ms. */
  engineLatencyMs: number;
  rawLatencyMs: number;
  /** Back-to-back calls per second with 8 concurrent callers. */
  engineThroughput: number;
  rawThroughput: number;
  /** engine / raw calls per second. */
  throughputRatio: number;
  target: string;
  skipped?: string;
}

const CONCURRENCY = 8;
const IDLE_MS = 5;

interface PiscinaLike {
  run(task: unknown): Promise<unknown>;
  destroy(): Promise<void>;
}

/**
 * `WorkerEngine({ reuse })` (a fresh vm context per run inside long-lived
 * workers) against piscina with the same number of threads running the same
 * expression with no fresh state at all: what a server picks today. piscina
 * is this package's dev dependency: where it does not resolve (the published
 * CLI, which bundles this code) the row says so.
 */
export async function runReuseBench(options: { iterations: number }): Promise<ReuseBenchRow[]> {
  const workers = Math.min(4, availableParallelism());
  const base = {
    tier: "worker, reuse: true",
    primitive: `piscina, ${workers} threads, no fresh state`,
    workers,
    target: "≥ 0.3× piscina's calls/s",
  };
  let Piscina: new (options: Record<string, unknown>) => PiscinaLike;
  try {
    const loaded = createRequire(import.meta.url)("piscina") as { Piscina?: typeof Piscina };
    Piscina = loaded.Piscina ?? (loaded as unknown as typeof Piscina);
  } catch {
    return [
      {
        ...base,
        engineLatencyMs: Number.NaN,
        rawLatencyMs: Number.NaN,
        engineThroughput: Number.NaN,
        rawThroughput: Number.NaN,
        throughputRatio: Number.NaN,
        skipped: "piscina is not installed here (the repository's pnpm bench runs this row)",
      },
    ];
  }
  const dir = mkdtempSync(join(tmpdir(), "suaveplan-bench-"));
  const task = join(dir, "task.mjs");
  writeFileSync(task, "export default function task() { return 2 + 3; }\n");
  const pool = new Piscina({ filename: pathToFileURL(task).href, minThreads: workers, maxThreads: workers });
  const { WorkerEngine } = await import("@suaveplan/sandbox/worker-engine");
  const engine = new WorkerEngine({ reuse: { workers } });
  try {
    const raw = async () => {
      const value = await pool.run({});
      if (value !== 5) throw new Error(`piscina returned ${JSON.stringify(value)}`);
    };
    const execute = async () => {
      const result = await engine.execute("2 + 3");
      if (!result.success || result.result !== 5)
        throw new Error(`the reuse tier returned ${JSON.stringify(result)}`);
    };
    const rawLatencyMs = await latencyMedian(raw, options.iterations, IDLE_MS);
    const engineLatencyMs = await latencyMedian(execute, options.iterations, IDLE_MS);
    const total = options.iterations * 8;
    const rawThroughput = await throughput(raw, total, CONCURRENCY);
    const engineThroughput = await throughput(execute, total, CONCURRENCY);
    return [
      {
        ...base,
        engineLatencyMs,
        rawLatencyMs,
        engineThroughput,
        rawThroughput,
        throughputRatio: engineThroughput / rawThroughput,
      },
    ];
  } finally {
    await engine.destroy();
    await pool.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Render rows as a Markdown table. */
export function formatReuseTable(rows: readonly ReuseBenchRow[]): string {
  const header =
    "| tier | raw primitive | engine median (ms) | raw median (ms) | engine calls/s (8 callers) | raw calls/s (8 callers) | ratio | target |";
  const rule = "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |";
  const fmt = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
  const lines = rows.map((r) =>
    r.skipped
      ? `| ${r.tier} | ${r.primitive} | skipped: ${r.skipped} | | | | | ${r.target} |`
      : `| ${r.tier} | ${r.primitive} | ${fmt(r.engineLatencyMs)} | ${fmt(r.rawLatencyMs)} | ${fmt(r.engineThroughput, 0)} | ${fmt(r.rawThroughput, 0)} | ${fmt(r.throughputRatio, 2)}× | ${r.target} |`,
  );
  return [header, rule, ...lines].join("\n");
}
