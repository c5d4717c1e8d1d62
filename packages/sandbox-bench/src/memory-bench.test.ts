import { describe, expect, it } from "vitest";
import { formatMemoryTable, runMemoryBench } from "./memory-bench.js";

describe("runMemoryBench", () => {
  it("measures resident memory of vm and isolate and their raw primitives, each in a fresh process", async () => {
    const rows = await runMemoryBench({ runs: 20 });
    expect(rows.map((row) => [row.engine, row.skipped])).toEqual([
      ["vm", undefined],
      ["isolate", undefined],
    ]);
    for (const row of rows) {
      expect([row.engineIdleBytes, row.rawIdleBytes, row.ratio].every(Number.isFinite)).toBe(true);
      expect(row.ratio).toBeGreaterThan(0);
    }
    expect(formatMemoryTable(rows).split("\n")).toHaveLength(4);
  }, 60_000);
});
