import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES, type ExitCode } from "../cli/exit-codes.js";
import { formatBenchTable, runEngineBench } from "./engine-bench.js";

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
  io.stdout(options.json ? `${JSON.stringify(rows, null, 2)}\n` : `${formatBenchTable(rows)}\n`);
  return rows.some((r) => r.skipped) ? EXIT_CODES.failed : EXIT_CODES.ok;
}
