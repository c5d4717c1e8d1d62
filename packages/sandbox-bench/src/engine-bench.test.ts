import { describe, expect, it } from "vitest";
import { formatBenchTable, runEngineBench } from "./engine-bench.js";

describe("runEngineBench", () => {
  it("measures an engine and its raw primitive in the same run", async () => {
    const rows = await runEngineBench({ iterations: 5, engines: ["vm"] });
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row?.skipped).toBeUndefined();
    expect(row?.engineLatencyMs).toBeGreaterThan(0);
    expect(row?.rawLatencyMs).toBeGreaterThan(0);
    expect(row?.latencyRatio).toBeCloseTo((row?.engineLatencyMs ?? 0) / (row?.rawLatencyMs ?? 1), 10);
    const table = formatBenchTable(rows);
    expect(table.split("\n")).toHaveLength(3);
    expect(table).toContain('| vm | vm.runInNewContext("2 + 3") |');
  });

  it("measures quickjs against a new quickjs-emscripten runtime and context per call", async () => {
    const rows = await runEngineBench({ iterations: 5, engines: ["quickjs"] });
    expect(rows.map((row) => [row.engine, row.skipped])).toEqual([["quickjs", undefined]]);
    const row = rows[0];
    expect(row?.engineLatencyMs).toBeGreaterThan(0);
    expect(row?.rawLatencyMs).toBeGreaterThan(0);
    expect(row?.rawThroughput).toBeGreaterThan(0);
    expect(formatBenchTable(rows)).toContain(
      "| quickjs | new quickjs-emscripten runtime + context per call | ",
    );
  });
});
