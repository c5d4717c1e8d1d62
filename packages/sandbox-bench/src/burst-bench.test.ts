import { describe, expect, it } from "vitest";
import { formatBurstTable, runBurstBench } from "./burst-bench.js";

describe("runBurstBench", () => {
  it("measures bursts on worker and spawn with spares following demand, one spare and cold starts", async () => {
    const rows = await runBurstBench({ bursts: 1 });
    expect(rows.map((row) => [row.engine, row.width, row.skipped])).toEqual([
      ["worker", 4, undefined],
      ["spawn", 4, undefined],
    ]);
    for (const row of rows) {
      for (const value of [row.followingMs, row.oneSpareMs, row.rawMs]) expect(value).toBeGreaterThan(0);
    }
    const table = formatBurstTable(rows).split("\n");
    expect(table).toHaveLength(4);
    expect(table[2]?.startsWith("| worker | 4 at once | ")).toBe(true);
    expect(table[3]?.endsWith("| spawn(process.execPath) round-trip |")).toBe(true);
  });
});
