import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES, type ExitCode } from "../cli/exit-codes.js";
import { formatBenchTable, makeBenchEngine, runEngineBench } from "./engine-bench.js";
import { formatReuseTable, runReuseBench } from "./reuse-bench.js";
import { formatToolCallTable, runToolCallBench } from "./tool-call-bench.js";

/** `suaveplan-sandbox bench`: measure every engine against its raw primitive and print the table. */
export async function benchCommand(
  options: { iterations: number; json: boolean },
  io: CliIo,
): Promise<ExitCode> {
  io.stderr(
    `Benchmarking execute("2 + 3") per engine against its raw primitive (${options.iterations} calls per vm/isolate row; an idle gap precedes each call)…\n`,
  );
  const rows = await runEngineBench({
    iterations: options.iterations,
    onRow: (row) => io.stderr(`  measured ${row.engine}${row.skipped ? ` (skipped: ${row.skipped})` : ""}\n`),
  });
  io.stderr("Benchmarking a tool-call round trip per engine against its raw message round trip…\n");
  const toolRows = await runToolCallBench(
    {
      vm: () => makeBenchEngine("vm"),
      isolate: () => makeBenchEngine("isolate"),
      worker: () => makeBenchEngine("worker"),
      spawn: () => makeBenchEngine("spawn"),
    },
    (row) =>
      io.stderr(`  measured ${row.engine} tool calls${row.skipped ? ` (skipped: ${row.skipped})` : ""}\n`),
  );
  io.stderr("Benchmarking the worker reuse tier against piscina (8 callers)…\n");
  const reuseRows = await runReuseBench({ iterations: options.iterations });
  io.stdout(
    options.json
      ? `${JSON.stringify({ execute: rows, toolCalls: toolRows, reuse: reuseRows }, null, 2)}\n`
      : `${formatBenchTable(rows)}\n\n${formatToolCallTable(toolRows)}\n\n${formatReuseTable(reuseRows)}\n`,
  );
  // The reuse row needs piscina, a dev dependency: without it the row says so and the bench still passes.
  return rows.some((r) => r.skipped) || toolRows.some((r) => r.skipped) ? EXIT_CODES.failed : EXIT_CODES.ok;
}
