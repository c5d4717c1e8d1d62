import { describe, expect, it } from "vitest";
import { formatDataPathTable, runDataPathBench, W2_CODE, W2_DATA } from "./data-path-bench.js";

describe("runDataPathBench", () => {
  it("measures W2 on vm and isolate against their raw primitives in the same run", async () => {
    const rows = await runDataPathBench({ iterations: 3 });
    expect(rows.map((row) => [row.engine, row.skipped])).toEqual([
      ["vm", undefined],
      ["isolate", undefined],
    ]);
    for (const row of rows) {
      expect(row.latencyRatio).toBeCloseTo(row.engineLatencyMs / row.rawLatencyMs, 10);
      expect(row.throughputRatio).toBeCloseTo(row.engineThroughput / row.rawThroughput, 10);
    }
    expect(formatDataPathTable(rows).split("\n")).toHaveLength(4);
  });

  it("W2 passes about 14 KB of JSON in and returns a small object", () => {
    expect([
      W2_DATA.length > 13_000 && W2_DATA.length < 16_000,
      W2_CODE.includes("JSON.parse(data)"),
    ]).toEqual([true, true]);
  });
});
