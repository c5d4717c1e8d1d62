import { describe, expect, it } from "vitest";
import { formatFacadeTable, runFacadeBench } from "./facade-bench.js";

describe("runFacadeBench", () => {
  it("measures the engine alone, createSandbox over it and the raw primitive in the same run", async () => {
    const rows = await runFacadeBench({ iterations: 5, engines: ["vm"] });
    expect(rows.map((row) => [row.engine, row.skipped])).toEqual([["vm", undefined]]);
    const row = rows[0];
    expect(row?.engineLatencyMs).toBeGreaterThan(0);
    expect(row?.facadeLatencyMs).toBeGreaterThan(0);
    expect(row?.rawLatencyMs).toBeGreaterThan(0);
    expect(row?.overheadMs).toBeCloseTo((row?.facadeLatencyMs ?? 0) - (row?.engineLatencyMs ?? 0), 10);
    expect(row?.facadeRatio).toBeCloseTo((row?.facadeLatencyMs ?? 0) / (row?.rawLatencyMs ?? 1), 10);
    const table = formatFacadeTable(rows).split("\n");
    expect(table).toHaveLength(3);
    expect(table[2]).toMatch(
      /^\| vm \| [\d.]+ \| [\d.]+ \| -?[\d.]+ \| ≤ 0\.05 \| [\d.]+ \| [\d.]+× \| ≤ 1\.0× \|$/,
    );
  });
});
