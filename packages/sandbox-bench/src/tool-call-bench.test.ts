import { describe, expect, it } from "vitest";
import { makeBenchEngine } from "./engine-bench.js";
import { formatToolCallTable, runToolCallBench } from "./tool-call-bench.js";

describe("runToolCallBench", () => {
  it("measures a tool-call round trip against the raw one in the same run, and checks 100 concurrent calls", async () => {
    const rows = await runToolCallBench({ vm: () => makeBenchEngine("vm") });
    expect(
      rows.map((row) => ({ engine: row.engine, skipped: row.skipped, concurrentOk: row.concurrentOk })),
    ).toEqual([{ engine: "vm", skipped: undefined, concurrentOk: true }]);
    expect(rows[0]?.ratio).toBeCloseTo((rows[0]?.engineCallMs ?? 0) / (rows[0]?.rawCallMs ?? 1), 10);
    const table = formatToolCallTable(rows).split("\n");
    expect(table).toHaveLength(3);
    expect(table[2]?.startsWith("| vm | a plain host await |")).toBe(true);
    expect(table[2]?.endsWith("| ≤ 2× | correct |")).toBe(true);
  }, 60_000);

  it("measures quickjs tool calls against an awaited quickjs-emscripten host function", async () => {
    const rows = await runToolCallBench({ quickjs: () => makeBenchEngine("quickjs") });
    expect(
      rows.map((row) => ({ engine: row.engine, skipped: row.skipped, concurrentOk: row.concurrentOk })),
    ).toEqual([{ engine: "quickjs", skipped: undefined, concurrentOk: true }]);
    expect(rows[0]?.rawCallMs).toBeGreaterThan(0);
    expect(
      formatToolCallTable(rows)
        .split("\n")[2]
        ?.startsWith(
          "| quickjs | an awaited quickjs-emscripten host function (newPromise + executePendingJobs) |",
        ),
    ).toBe(true);
  }, 60_000);
});
