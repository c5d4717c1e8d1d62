import * as vm from "node:vm";
import { describe, expect, it } from "vitest";
import { toGuestScript } from "./guest-script.js";

const evaluate = (code: string) => vm.runInNewContext(toGuestScript(code).source, { setTimeout });

describe("toGuestScript", () => {
  it("passes plain scripts through so the completion value is the result", () => {
    expect(toGuestScript("2 + 3")).toEqual({ source: "2 + 3", async: false });
    expect(evaluate("const a = 2; a * 21")).toBe(42);
  });

  it("wraps top-level await and returns the last expression", async () => {
    const script = toGuestScript("const v = await Promise.resolve(20);\nv + 22");
    expect(script.async).toBe(true);
    await expect(evaluate("const v = await Promise.resolve(20);\nv + 22")).resolves.toBe(42);
    await expect(evaluate("await new Promise((r) => setTimeout(r, 5)); 'slept'")).resolves.toBe("slept");
  });

  it("supports top-level return and for await", async () => {
    await expect(evaluate("if (true) return 'early'; 'late'")).resolves.toBe("early");
    await expect(evaluate("let s = 0; for await (const x of [1, 2]) s += x; s")).resolves.toBe(3);
  });

  it("ignores await inside async functions", () => {
    expect(toGuestScript("async function f() { await 1 } 5").async).toBe(false);
  });

  it("keeps line numbers for errors after the first line", async () => {
    const error = await evaluate("await 1;\n\nnull.x").catch((e: Error) => e);
    expect(String((error as Error).stack)).toMatch(/:3:/);
  });

  it("leaves unparsable code unchanged for the engine to report", () => {
    expect(toGuestScript("const = 1")).toEqual({ source: "const = 1", async: false });
  });
});
