import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { describe, expect, it } from "vitest";
import { ModuleRegistry } from "./module-registry.js";
import { buildExecutionRequest } from "./prepare-execution.js";

function straightLineOf(code: string, modules = new ModuleRegistry()): boolean | undefined {
  const built = buildExecutionRequest(code, { a: 1 }, undefined, parseEngineLimits(), modules);
  if (!built.ok) throw new Error(built.result.error);
  return built.request.straightLine;
}

describe("buildExecutionRequest straightLine", () => {
  it.each([
    ["2 + 3", true],
    ["a * 2", true],
    ["[a, { b: a }]", true],
    ["Math.max(a, 3)", false],
    ["a = 1", false],
    ["while (true) {}", false],
    ["await null; a", false],
  ])("marks %j as a bounded pure expression: %s", (code, expected) => {
    expect(straightLineOf(code)).toBe(expected);
  });

  it("never marks code while a source module is registered (a getter of one could run user code)", () => {
    const modules = new ModuleRegistry();
    modules.register({ name: "lib", source: "module.exports = { get a() { for (;;) {} } };" });
    expect([straightLineOf("lib.a", modules), straightLineOf("lib.a")]).toEqual([false, true]);
  });
});
