import { describe, expect, it } from "vitest";
import { buildExecutionRequest } from "./execution-request.js";
import { ModuleRegistry } from "./module-registry.js";

const limits = { timeout: 1000, memoryLimit: 1024 * 1024, maxOutputSize: 1024 };

function refusal(code: unknown, context?: unknown, options?: unknown) {
  const built = buildExecutionRequest(code, context, options, limits, new ModuleRegistry());
  return built.ok ? undefined : { error: built.result.error, errorCode: built.result.errorCode };
}

describe("buildExecutionRequest: bad input resolves the same coded failure on every engine", () => {
  it.each([
    [
      42,
      undefined,
      undefined,
      "SANDBOX_INVALID_OPTIONS",
      "code: must be a string (got number) (SANDBOX_INVALID_OPTIONS)",
    ],
    [
      "1",
      [1],
      undefined,
      "SANDBOX_INVALID_OPTIONS",
      "context: must be a plain object of values to copy in as globals (SANDBOX_INVALID_OPTIONS)",
    ],
    [
      "1",
      { a: { f: () => 1 } },
      undefined,
      "SANDBOX_INVALID_OPTIONS",
      "context.a.f: a function cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
    ],
    [
      "import('fs')",
      undefined,
      undefined,
      "SANDBOX_CODE_BLOCKED",
      "import() and import declarations are not available in the sandbox (line 1) (SANDBOX_CODE_BLOCKED)",
    ],
    [
      "const x = 1;\nawait import('node:child_process')",
      undefined,
      undefined,
      "SANDBOX_CODE_BLOCKED",
      "import() and import declarations are not available in the sandbox (line 2) (SANDBOX_CODE_BLOCKED)",
    ],
  ])("execute(%j, %j, %j) → %s", (code, context, options, errorCode, error) => {
    expect(refusal(code, context, options)).toStrictEqual({ errorCode, error });
  });

  it("names an unknown option key", () => {
    expect(refusal("1", {}, { timeot: 5 })?.errorCode).toBe("SANDBOX_INVALID_OPTIONS");
    expect(refusal("1", {}, { timeot: 5 })?.error).toContain("timeot");
  });

  it("lets the word import appear where it is not an import", () => {
    expect(refusal("const important = 'import'; important")).toBeUndefined();
  });

  it("refuses a source module that uses import()", () => {
    const registry = new ModuleRegistry();
    expect(() => registry.register({ name: "m", source: "module.exports = () => import('fs')" })).toThrow(
      "module m: import() and import declarations are not available in the sandbox (line 1)",
    );
  });
});
