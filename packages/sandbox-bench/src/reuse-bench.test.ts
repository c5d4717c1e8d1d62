import { describe, expect, it } from "vitest";
import { formatReuseTable, runReuseBench } from "./reuse-bench.js";

describe("runReuseBench", () => {
  it("measures the worker reuse tier and piscina in the same run", async () => {
    const rows = await runReuseBench({ iterations: 5 });
    expect(rows).toHaveLength(1);
    const row = rows[0];
    expect(row?.skipped).toBeUndefined();
    expect(row?.engineThroughput).toBeGreaterThan(0);
    expect(row?.rawThroughput).toBeGreaterThan(0);
    expect(row?.throughputRatio).toBeCloseTo((row?.engineThroughput ?? 0) / (row?.rawThroughput ?? 1), 10);
    const table = formatReuseTable(rows);
    expect(table.split("\n")).toHaveLength(3);
    expect(
      table
        .split("\n")[2]
        ?.startsWith(`| worker, reuse: true | piscina, ${row?.workers} threads, no fresh state |`),
    ).toBe(true);
  });
});
