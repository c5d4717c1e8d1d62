import { availableParallelism } from "node:os";
import * as vm from "node:vm";

/**
 * What fresh state per call allows at most, measured in the same run as the
 * rows it bounds: a `node:vm` context made and dropped, with nothing run in
 * it, is the least any engine with a fresh context per call pays.
 */
export interface CeilingBenchRow {
  what: string;
  /** Calls per second the fresh contexts alone allow. */
  ceilingThroughput: number;
  /** What the bounded row is held against. */
  against: string;
  /** That primitive's calls per second, measured in this run. */
  againstThroughput: number;
  /** ceiling / against: the most the bounded row's ratio can reach. */
  ratio: number;
  /** The target it bounds. */
  bounds: string;
}

// The engine's own context options (sandbox-guest's vm realm): an ordinary global, no string code generation.
const CONTEXT_OPTIONS = {
  codeGeneration: { strings: false, wasm: false },
  microtaskMode: "afterEvaluate",
} as const;

/** Calls per second of `call` run back to back for about `ms` (after a short warm-up). */
function rate(call: () => unknown, ms: number): number {
  for (let i = 0; i < 50; i++) call();
  let calls = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    call();
    calls++;
    now = performance.now();
  }
  return (calls / (now - start)) * 1000;
}

/**
 * The ceilings of two targets, each in the same run as its comparison: the
 * vm engine's 8-caller throughput against `vm.runInNewContext` (a fresh
 * context alone, on the one thread a vm engine runs on), and the worker reuse
 * tier against piscina (a fresh context alone on each core, with no message
 * crossing a thread: `piscinaThroughput` is the reuse row's own raw figure).
 * Both are synchronous loops: concurrent callers cannot add to one thread's work.
 */
export function runCeilingBench(options: {
  ms: number;
  piscinaThroughput?: number | undefined;
}): CeilingBenchRow[] {
  const raw = rate(() => vm.runInNewContext("2 + 3"), options.ms);
  const context = rate(() => vm.createContext(vm.constants.DONT_CONTEXTIFY, CONTEXT_OPTIONS), options.ms);
  const rows: CeilingBenchRow[] = [
    {
      what: "vm: a fresh context alone, nothing run in it",
      ceilingThroughput: context,
      against: 'vm.runInNewContext("2 + 3")',
      againstThroughput: raw,
      ratio: context / raw,
      bounds: "vm W1, 8 callers, ≥ 1.0× raw",
    },
  ];
  const piscina = options.piscinaThroughput;
  if (piscina !== undefined && Number.isFinite(piscina)) {
    const cores = availableParallelism();
    rows.push({
      what: `reuse tier: a fresh context alone on each of ${cores} cores, no messages`,
      ceilingThroughput: context * cores,
      against: "piscina (the reuse row's raw calls/s)",
      againstThroughput: piscina,
      ratio: (context * cores) / piscina,
      bounds: "reuse tier ≥ 0.3× piscina",
    });
  }
  return rows;
}

/** Render rows as a Markdown table. */
export function formatCeilingTable(rows: readonly CeilingBenchRow[]): string {
  const header = "| ceiling | calls/s | against | its calls/s | ratio at most | bounds |";
  const rule = "| --- | ---: | --- | ---: | ---: | --- |";
  const lines = rows.map(
    (r) =>
      `| ${r.what} | ${r.ceilingThroughput.toFixed(0)} | ${r.against} | ${r.againstThroughput.toFixed(0)} | ${r.ratio.toFixed(2)}× | ${r.bounds} |`,
  );
  return [header, rule, ...lines].join("\n");
}
