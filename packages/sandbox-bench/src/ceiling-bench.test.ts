import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { formatCeilingTable, runCeilingBench } from "./ceiling-bench.js";

describe("runCeilingBench", () => {
  it("bounds the vm row by a fresh context alone, and the reuse row by one per core, in the same run", () => {
    const rows = runCeilingBench({ ms: 50, piscinaThroughput: 10_000 });
    expect(rows.map((row) => [row.bounds, row.against])).toEqual([
      ["vm W1, 8 callers, ≥ 1.0× raw", 'vm.runInNewContext("2 + 3")'],
      ["reuse tier ≥ 0.3× piscina", "piscina (the reuse row's raw calls/s)"],
    ]);
    const [vmRow, reuseRow] = rows;
    expect(vmRow?.ceilingThroughput).toBeGreaterThan(0);
    expect(vmRow?.ratio).toBeCloseTo((vmRow?.ceilingThroughput ?? 0) / (vmRow?.againstThroughput ?? 1), 10);
    expect([reuseRow?.ceilingThroughput, reuseRow?.againstThroughput]).toEqual([
      (vmRow?.ceilingThroughput ?? 0) * availableParallelism(),
      10_000,
    ]);
    expect(formatCeilingTable(rows).split("\n")).toHaveLength(4);
  });

  it("leaves the reuse ceiling out when the reuse row has no piscina figure", () => {
    expect(runCeilingBench({ ms: 10, piscinaThroughput: Number.NaN }).map((row) => row.bounds)).toEqual([
      "vm W1, 8 callers, ≥ 1.0× raw",
    ]);
  });
});
