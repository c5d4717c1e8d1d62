import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { describe, expect, it } from "vitest";
import { ModuleRegistry } from "../prepare/module-registry.js";
import { buildExecutionRequest } from "../prepare/prepare-execution.js";
import type { ExecutionRequest } from "./execution-request.js";
import { readExecutionRequest } from "./read-execution-request.js";

/** What crossed: the request as the other side receives it (JSON or a structured clone of plain data). */
function crossed(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

function built(code: string): ExecutionRequest {
  const modules = new ModuleRegistry();
  modules.register({ name: "lib", exports: { b: new Date(1) } });
  modules.register({ name: "twice", source: "module.exports = (n) => n * 2;" });
  const result = buildExecutionRequest(code, { a: 1n }, { timeout: 900 }, parseEngineLimits(), modules);
  if (!result.ok) throw new Error(result.result.error);
  return result.request;
}

describe("readExecutionRequest", () => {
  it("reads back exactly the request the engine built, top-level await shift included", () => {
    for (const code of ["a + lib.b + twice(2)", "await null; a"]) {
      const request = built(code);
      expect(readExecutionRequest(crossed(request))).toStrictEqual(crossed(request));
    }
    expect(built("await null; a").shift?.insertions.length).toBeGreaterThan(1);
  });

  it("keeps only the known fields", () => {
    const request = { ...built("1"), tools: ["echo"], extra: "dropped" };
    expect(readExecutionRequest(crossed(request))).toStrictEqual(crossed({ ...built("1"), tools: ["echo"] }));
  });

  it("names the first bad field", () => {
    const base = JSON.parse(JSON.stringify(built("1"))) as Record<string, unknown>;
    const cases: Array<[unknown, string]> = [
      ["nope", "request: is not one object"],
      [[], "request: is not one object"],
      [null, "request: is not one object"],
      [{ ...base, code: 1 }, "request.code: must be a string"],
      [{ ...base, contextText: null }, "request.contextText: must be a string"],
      [{ ...base, sourceModules: {} }, "request.sourceModules: must be an array"],
      [
        { ...base, sourceModules: [{ name: "a-b", source: "" }] },
        "request.sourceModules[0].name: must be a JavaScript identifier",
      ],
      [
        { ...base, sourceModules: [{ name: "a", source: 1 }] },
        "request.sourceModules[0].source: must be a string",
      ],
      [{ ...base, maxOutputSize: 0 }, "request.maxOutputSize: must be a positive integer"],
      [{ ...base, timeoutMs: 1.5 }, "request.timeoutMs: must be a positive integer"],
      [{ ...base, timeoutMs: 2 ** 31 }, "request.timeoutMs: must be at most 2147483647 (ms)"],
      [
        { ...base, shift: { prefix: 1, line: 0, column: 0, length: 0 } },
        "request.shift.insertions: must be an array",
      ],
      [
        {
          ...base,
          shift: {
            insertions: [
              [1, 0, 14],
              [2, 3],
            ],
          },
        },
        "request.shift.insertions[1]: must be [line, column, length]",
      ],
      [
        { ...base, shift: { insertions: [[1, -1, 14]] } },
        "request.shift.insertions[0] (column): must be a non-negative integer",
      ],
      [{ ...base, tools: [1] }, "request.tools: must be an array of strings"],
      [{ ...base, straightLine: "yes" }, "request.straightLine: must be a boolean"],
    ];
    for (const [value, message] of cases) {
      expect(() => readExecutionRequest(value)).toThrow(new Error(message));
    }
  });
});
