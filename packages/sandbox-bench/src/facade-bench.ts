import { setTimeout as sleep } from "node:timers/promises";
import type { SandboxEngine } from "@suaveplan/sandbox-core/types";
import { makeBenchEngine, makeRawPrimitive } from "./engine-bench.js";
import { median } from "./internal/measure.js";

/** What `createSandbox` adds to one `execute("2 + 3")`, against the engine alone and its raw primitive. */
export interface FacadeBenchRow {
  engine: FacadeBenchEngine;
  /** Median latency of the engine alone, ms. */
  engineLatencyMs: number;
  /** Median latency through `createSandbox({ engine })`, ms. */
  facadeLatencyMs: number;
  /** facade − engine, ms (target ≤ 0.05). */
  overheadMs: number;
  /** Median latency of the engine's raw primitive, ms. */
  rawLatencyMs: number;
  /** facade / raw (target ≤ 1.0×). */
  facadeRatio: number;
  /** Why the row was skipped (e.g. isolated-vm not installed). */
  skipped?: string;
}

/** The engines whose facade cost is visible next to their run: the in-process ones. */
export type FacadeBenchEngine = "vm" | "isolate" | "quickjs";

/** Options of {@link runFacadeBench}. */
export interface FacadeBenchOptions {
  /** Measured calls per subject. */
  iterations: number;
  engines?: readonly FacadeBenchEngine[];
  onRow?: (row: FacadeBenchRow) => void;
}

/** Idle gap before each sample, ms: an interactive caller, with the engine's spare context ready. */
const IDLE_MS = 20;
const CODE = "2 + 3";

/**
 * The facade's cost per call: the engine alone, `createSandbox` over the same engine and the raw
 * primitive, sampled in turn in one process (so drift on the machine hits all three alike), each
 * sample after an idle gap. The issue that set the targets: `createSandbox` adds ≤ 0.05 ms, so
 * that through it W1 stays ≤ 1.0× of the raw primitive. Worker and spawn are left out: their
 * raw primitive is a cold start, tens of milliseconds, far above either.
 */
export async function runFacadeBench(options: FacadeBenchOptions): Promise<FacadeBenchRow[]> {
  const rows: FacadeBenchRow[] = [];
  for (const name of options.engines ?? (["vm", "isolate", "quickjs"] as const)) {
    let row: FacadeBenchRow;
    try {
      row = await measure(name, options.iterations);
    } catch (error) {
      row = {
        engine: name,
        engineLatencyMs: Number.NaN,
        facadeLatencyMs: Number.NaN,
        overheadMs: Number.NaN,
        rawLatencyMs: Number.NaN,
        facadeRatio: Number.NaN,
        skipped: error instanceof Error ? error.message : String(error),
      };
    }
    rows.push(row);
    options.onRow?.(row);
  }
  return rows;
}

async function measure(name: FacadeBenchEngine, iterations: number): Promise<FacadeBenchRow> {
  const { createSandbox } = await import("@suaveplan/sandbox");
  const raw = await makeRawPrimitive(name);
  const engine: SandboxEngine = await makeBenchEngine(name);
  const sandbox = createSandbox({ engine: name });
  const checked = (what: string) => (result: { success: boolean; result?: unknown }) => {
    if (!result.success || result.result !== 5) throw new Error(`${what} returned ${JSON.stringify(result)}`);
  };
  const subjects = [
    () => engine.execute(CODE).then(checked(`the ${name} engine`)),
    () => sandbox.execute(CODE).then(checked(`createSandbox({ engine: "${name}" })`)),
    () => raw.call(),
  ];
  const samples: number[][] = [[], [], []];
  try {
    for (let i = 0; i < 5; i++) for (const call of subjects) await call(); // warm-up
    for (let i = 0; i < iterations; i++) {
      for (let s = 0; s < subjects.length; s++) {
        await sleep(IDLE_MS);
        const start = performance.now();
        await (subjects[s] as () => Promise<unknown>)();
        (samples[s] as number[]).push(performance.now() - start);
      }
    }
  } finally {
    raw.close();
    await engine.destroy();
    await sandbox.destroy();
  }
  const [engineLatencyMs, facadeLatencyMs, rawLatencyMs] = samples.map(median) as [number, number, number];
  return {
    engine: name,
    engineLatencyMs,
    facadeLatencyMs,
    overheadMs: facadeLatencyMs - engineLatencyMs,
    rawLatencyMs,
    facadeRatio: facadeLatencyMs / rawLatencyMs,
  };
}

/** The rows as a Markdown table. */
export function formatFacadeTable(rows: readonly FacadeBenchRow[]): string {
  const header =
    "| engine | engine alone (ms) | createSandbox (ms) | added (ms) | target | raw primitive (ms) | createSandbox / raw | target |";
  const rule = "| --- | ---: | ---: | ---: | --- | ---: | ---: | --- |";
  const fmt = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
  const lines = rows.map((r) =>
    r.skipped
      ? `| ${r.engine} | skipped: ${r.skipped} | | | ≤ 0.05 | | | ≤ 1.0× |`
      : `| ${r.engine} | ${fmt(r.engineLatencyMs)} | ${fmt(r.facadeLatencyMs)} | ${fmt(r.overheadMs)} | ≤ 0.05 | ${fmt(r.rawLatencyMs)} | ${fmt(r.facadeRatio, 2)}× | ≤ 1.0× |`,
  );
  return [header, rule, ...lines].join("\n");
}
