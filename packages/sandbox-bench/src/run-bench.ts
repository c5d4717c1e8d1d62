import { type BenchOptionsInput, BenchOptionsSchema } from "./bench-options.js";
import { formatBurstTable, runBurstBench } from "./burst-bench.js";
import { formatCeilingTable, runCeilingBench } from "./ceiling-bench.js";
import { formatDataPathTable, runDataPathBench } from "./data-path-bench.js";
import { formatBenchTable, makeBenchEngine, runEngineBench } from "./engine-bench.js";
import { formatFacadeTable, runFacadeBench } from "./facade-bench.js";
import { createProgress } from "./internal/progress.js";
import { formatMemoryTable, runMemoryBench } from "./memory-bench.js";
import { formatReuseTable, runReuseBench } from "./reuse-bench.js";
import { formatToolCallTable, runToolCallBench } from "./tool-call-bench.js";

/** Where {@link runBench} writes: the tables (or JSON) to `stdout`, a progress line per row to `stderr`. */
export interface BenchIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/** What a finished {@link runBench} reports besides what it printed. */
export interface BenchOutcome {
  /** False when a row that must run was skipped (its reason is in the table); the reuse row, which needs piscina, does not count. */
  complete: boolean;
}

/**
 * Measure every engine against its raw primitive in the same run and print the
 * tables: W1 per engine, what `createSandbox` adds to it, bursts, tool calls, the data path (W2), resident
 * memory, the worker reuse tier and the ceilings. Takes minutes; measures
 * isolated-vm in this process, so Node must run with `--no-node-snapshot`
 * (Node 20+). What `suaveplan-sandbox bench` and this package's `bench` script run.
 */
export async function runBench(input: BenchOptionsInput, io: BenchIo): Promise<BenchOutcome> {
  const options = BenchOptionsSchema.parse(input);
  // 5 engines (W1), 3 facade rows, 2 burst rows, 5 tool-call rows, 3 data-path rows (W2), 2 memory rows, 1 reuse row, the ceilings.
  const step = createProgress(22, (line) => io.stderr(line));
  const skippedNote = (row: { skipped?: string | undefined }) =>
    row.skipped ? ` (skipped: ${row.skipped})` : "";
  io.stderr(
    `Benchmarking execute("2 + 3") (W1) per engine against its raw primitive (${options.iterations} calls per vm/isolate/quickjs row; an idle gap precedes each call)…\n`,
  );
  const rows = await runEngineBench({
    iterations: options.iterations,
    onRow: (row) => step(`${row.engine} W1${skippedNote(row)}`),
  });
  io.stderr(
    'Benchmarking what createSandbox adds to execute("2 + 3") over the engine alone (vm, isolate, quickjs; 20 ms idle gaps)…\n',
  );
  const facadeRows = await runFacadeBench({
    iterations: options.iterations,
    onRow: (row) => step(`${row.engine} createSandbox${skippedNote(row)}`),
  });
  io.stderr(
    "Benchmarking bursts of 4 concurrent calls after an idle spell (worker, spawn): spares following demand, one spare, cold starts…\n",
  );
  const burstRows = await runBurstBench({
    bursts: 5,
    onRow: (row) => step(`${row.engine} bursts${skippedNote(row)}`),
  });
  io.stderr("Benchmarking a tool-call round trip per engine against its raw message round trip…\n");
  const toolRows = await runToolCallBench(
    {
      vm: () => makeBenchEngine("vm"),
      isolate: () => makeBenchEngine("isolate"),
      worker: () => makeBenchEngine("worker"),
      spawn: () => makeBenchEngine("spawn"),
      quickjs: () => makeBenchEngine("quickjs"),
    },
    (row) => step(`${row.engine} tool calls${skippedNote(row)}`),
  );
  io.stderr(
    "Benchmarking the data path (W2: a 14 KB JSON string through context, parsed, grouped, summed)…\n",
  );
  const dataRows = await runDataPathBench({
    iterations: options.iterations,
    onRow: (row) => step(`${row.engine} W2${skippedNote(row)}`),
  });
  io.stderr("Measuring resident memory: an idle engine, then 1,000 W2 runs, each in a fresh process…\n");
  const memoryRows = await runMemoryBench({
    runs: 1000,
    onRow: (row) => step(`${row.engine} memory${skippedNote(row)}`),
  });
  io.stderr("Benchmarking the worker reuse tier against piscina (8 callers)…\n");
  const reuseRows = await runReuseBench({ iterations: options.iterations });
  for (const row of reuseRows) step(`worker reuse${skippedNote(row)}`);
  io.stderr("Measuring what a fresh context per call allows at most (the ceilings of two targets)…\n");
  const ceilingRows = runCeilingBench({ ms: 2_000, piscinaThroughput: reuseRows[0]?.rawThroughput });
  step("ceilings");
  io.stdout(
    options.json
      ? `${JSON.stringify({ execute: rows, facade: facadeRows, bursts: burstRows, toolCalls: toolRows, dataPath: dataRows, memory: memoryRows, reuse: reuseRows, ceilings: ceilingRows }, null, 2)}\n`
      : `${[formatBenchTable(rows), formatFacadeTable(facadeRows), formatBurstTable(burstRows), formatToolCallTable(toolRows), formatDataPathTable(dataRows), formatMemoryTable(memoryRows), formatReuseTable(reuseRows), formatCeilingTable(ceilingRows)].join("\n\n")}\n`,
  );
  // The reuse row needs piscina, a dev dependency: without it the row says so and the bench still passes.
  return {
    complete: ![...rows, ...facadeRows, ...burstRows, ...toolRows, ...dataRows, ...memoryRows].some(
      (r) => r.skipped,
    ),
  };
}
