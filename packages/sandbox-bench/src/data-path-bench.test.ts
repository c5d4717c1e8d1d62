import { describe, expect, it } from "vitest";
import { formatDataPathTable, runDataPathBench, W2_CODE, W2_DATA } from "./data-path-bench.js";

describe("runDataPathBench", () => {
  it("measures W2 on vm, isolate and quickjs against their raw primitives in the same run", async () => {
    const rows = await runDataPathBench({ iterations: 3 });
    expect(rows.map((row) => [row.engine, row.skipped])).toEqual([
      ["vm", undefined],
      ["isolate", undefined],
      ["quickjs", undefined],
    ]);
    for (const row of rows) {
      expect(row.latencyRatio).toBeCloseTo(row.engineLatencyMs / row.rawLatencyMs, 10);
      expect(row.throughputRatio).toBeCloseTo(row.engineThroughput / row.rawThroughput, 10);
    }
    const table = formatDataPathTable(rows).split("\n");
    expect(table).toHaveLength(5);
    expect(
      table[4]?.startsWith(
        "| quickjs | new quickjs-emscripten runtime + context per call, data set as a string, result dumped |",
      ),
    ).toBe(true);
  });

  it("W2 passes about 14 KB of JSON in and returns a small object", () => {
    expect([
      W2_DATA.length > 13_000 && W2_DATA.length < 16_000,
      W2_CODE.includes("JSON.parse(data)"),
    ]).toEqual([true, true]);
  });
});
