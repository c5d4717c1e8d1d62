import { describe, expect, it } from "vitest";
import { byteLength, LogCollector, truncateOutput, truncationSentinel } from "./output-budget.js";

describe("truncateOutput", () => {
  it("counts UTF-8 bytes, not UTF-16 units, and never splits a character", () => {
    const text = "é".repeat(10); // 20 bytes, 10 units
    expect(truncateOutput(text, 20)).toBe(text);
    expect(truncateOutput(text, 5)).toBe(`éé${truncationSentinel(5)}`);
    expect(byteLength("€")).toBe(3);
  });
});

describe("LogCollector", () => {
  it("keeps lines under the budget, cuts the overflowing one and drops the rest", () => {
    const seen: string[] = [];
    const collector = new LogCollector(8, (entry) => seen.push(entry.message));
    collector.push("log", "abcd");
    collector.push("info", "efghij");
    collector.push("log", "never kept");
    expect(collector.entries).toEqual([
      { level: "log", message: "abcd" },
      { level: "info", message: "efgh" },
      { level: "warn", message: "[output truncated at 8 bytes]" },
    ]);
    expect(collector.truncated).toBe(true);
    expect(collector.dropped).toBe(1);
    expect(seen).toEqual(["abcd", "efgh", "[output truncated at 8 bytes]"]);
  });

  it("bounds a flood of empty lines: each costs one byte", () => {
    const collector = new LogCollector(3);
    for (let i = 0; i < 10_000; i++) collector.push("log", "");
    expect(collector.entries).toEqual([
      { level: "log", message: "" },
      { level: "log", message: "" },
      { level: "log", message: "" },
      { level: "warn", message: "[output truncated at 3 bytes]" },
    ]);
    expect(collector.dropped).toBe(9_996);
  });
});
