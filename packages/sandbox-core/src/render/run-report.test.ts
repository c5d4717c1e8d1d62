import { describe, expect, it } from "vitest";
import { renderRunReport } from "./run-report.js";

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), "utf8");

describe("renderRunReport", () => {
  it("passes a small run through whole, head fields first", () => {
    const report = renderRunReport(
      {
        success: true,
        result: { n: 42n },
        logs: [{ level: "log", message: "hi" }],
        calls: [{ tool: "t", status: "ok", input: { a: 1 }, output: 2, durationMs: 1.5 }],
      },
      { maxBytes: 4_096, head: { normalised: ["removed the Markdown fences (```js) around the code"] } },
    );
    expect(report).toEqual({
      success: true,
      normalised: ["removed the Markdown fences (```js) around the code"],
      logs: [{ level: "log", message: "hi" }],
      calls: [{ tool: "t", status: "ok", input: { a: 1 }, output: 2, durationMs: 1.5 }],
      result: { n: { $bigint: "42" } },
    });
  });

  it("keeps log lines in order while they fit, says how many were cut, and stays within maxBytes", () => {
    const logs = Array.from({ length: 500 }, (_, i) => ({
      level: "log",
      message: `line ${i} ${"x".repeat(40)}`,
    }));
    const report = renderRunReport(
      {
        success: false,
        error: "Error: boom [SANDBOX_GUEST_ERROR]",
        errorCode: "SANDBOX_GUEST_ERROR",
        guestError: { line: 3 },
        logs,
        calls: [],
      },
      { maxBytes: 2_048 },
    );
    expect(bytes(report)).toBeLessThanOrEqual(2_048);
    expect(report.error).toEqual({
      code: "SANDBOX_GUEST_ERROR",
      message: "Error: boom [SANDBOX_GUEST_ERROR]",
      line: 3,
    });
    expect(report.logs).toEqual(logs.slice(0, report.logs.length));
    expect(report.logs.length).toBeGreaterThan(5);
    expect(report.truncated).toBe(
      `cut to keep the response within 2048 bytes: ${500 - report.logs.length} of 500 log lines`,
    );
  });

  it("measures what is sent: a report sent twice (copies: 2, measured both) fits the budget together", () => {
    const measure = (report: unknown): number => {
      const text = JSON.stringify(report);
      return Buffer.byteLength(text) + Buffer.byteLength(JSON.stringify(text));
    };
    const report = renderRunReport(
      {
        success: true,
        result: Array.from({ length: 10_000 }, (_, i) => `"quoted" ${i}`),
        logs: [],
        calls: [],
      },
      { maxBytes: 8_192, copies: 2, measure },
    );
    expect(measure(report)).toBeLessThanOrEqual(8_192);
    expect((report.result as unknown[]).at(-1)).toEqual({ $cut: expect.stringMatching(/^\d+ more items$/) });
    expect(report.truncated).toBe(
      "cut to keep the response within 8192 bytes: the result (see its $cut tags)",
    );
  });
});
