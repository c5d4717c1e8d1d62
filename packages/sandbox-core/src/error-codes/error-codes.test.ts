import { describe, expect, it } from "vitest";
import {
  defineCodes,
  errorDocsPath,
  isSandboxError,
  isSuaveplanError,
  SANDBOX_CODES,
  SandboxError,
  SuaveplanError,
  withErrorCode,
} from "./index.js";

describe("error codes", () => {
  it("every SANDBOX code is registered", () => {
    expect(SANDBOX_CODES).toEqual({
      INVALID_CONFIG: "SANDBOX_INVALID_CONFIG",
      INVALID_OPTIONS: "SANDBOX_INVALID_OPTIONS",
      INVALID_MODULE: "SANDBOX_INVALID_MODULE",
      BLOCKED_MODULE: "SANDBOX_BLOCKED_MODULE",
      RATE_LIMITED: "SANDBOX_RATE_LIMITED",
      TIMEOUT: "SANDBOX_TIMEOUT",
      MEMORY_EXCEEDED: "SANDBOX_MEMORY_EXCEEDED",
      CODE_BLOCKED: "SANDBOX_CODE_BLOCKED",
      CODE_TOO_LONG: "SANDBOX_CODE_TOO_LONG",
      ENGINE_DISPOSED: "SANDBOX_ENGINE_DISPOSED",
      ENGINE_FAILED: "SANDBOX_ENGINE_FAILED",
      ENGINE_CRASHED: "SANDBOX_ENGINE_CRASHED",
      ENGINE_UNAVAILABLE: "SANDBOX_ENGINE_UNAVAILABLE",
      GUEST_ERROR: "SANDBOX_GUEST_ERROR",
      SYNTAX_ERROR: "SANDBOX_SYNTAX_ERROR",
      TYPECHECK_FAILED: "SANDBOX_TYPECHECK_FAILED",
      RESULT_NOT_TRANSFERABLE: "SANDBOX_RESULT_NOT_TRANSFERABLE",
      CANCELLED: "SANDBOX_CANCELLED",
      WORKER_FAILED: "SANDBOX_WORKER_FAILED",
      SPAWN_FAILED: "SANDBOX_SPAWN_FAILED",
      POOL_EXHAUSTED: "SANDBOX_POOL_EXHAUSTED",
      STREAM_CLOSED: "SANDBOX_STREAM_CLOSED",
      DISPATCH_TIMEOUT: "SANDBOX_DISPATCH_TIMEOUT",
      DISPATCH_LOST: "SANDBOX_DISPATCH_LOST",
      REPLAY_DIVERGED: "SANDBOX_REPLAY_DIVERGED",
    });
    const values = Object.values(SANDBOX_CODES);
    expect(values).toHaveLength(25);
    expect(new Set(values).size).toBe(25);
    for (const [name, code] of Object.entries(SANDBOX_CODES)) expect(code).toBe(`SANDBOX_${name}`);
    expect(Object.isFrozen(SANDBOX_CODES)).toBe(true);
    expect(() => {
      (SANDBOX_CODES as Record<string, string>).EXTRA = "SANDBOX_EXTRA";
    }).toThrow(TypeError);
  });

  it("defineCodes builds a frozen, prefixed record and rejects bad names", () => {
    const codes = defineCodes("SAND_VM", ["EVAL_REJECTED", "CTX_1"]);
    expect(codes).toEqual({ EVAL_REJECTED: "SAND_VM_EVAL_REJECTED", CTX_1: "SAND_VM_CTX_1" });
    expect(Object.isFrozen(codes)).toBe(true);
    expect(() => defineCodes("sand", ["X"])).toThrowError(
      'defineCodes: prefix "sand" must be UPPER_SNAKE_CASE',
    );
    expect(() => defineCodes("SAND", ["bad-name"])).toThrowError(
      'defineCodes: code name "bad-name" must be UPPER_SNAKE_CASE',
    );
    expect(() => defineCodes("SAND", ["TWICE", "TWICE"])).toThrowError(
      'defineCodes: code name "TWICE" is declared twice',
    );
    expect(() => defineCodes("SAND", ["X"], { docs: "Not A Package" })).toThrowError(
      'defineCodes: docs "Not A Package" must be an npm package name',
    );
  });

  it("a code declared with a docs package ends every message with the code and its shipped page", () => {
    const codes = defineCodes("DEMO_DOCS", ["BROKEN", "OTHER"], { docs: "@suaveplan/demo" });
    expect(errorDocsPath(codes.BROKEN)).toBe("@suaveplan/demo/docs/errors/DEMO_DOCS_BROKEN.md");
    expect(errorDocsPath("DEMO_UNDECLARED")).toBeUndefined();
    const suffix = "(DEMO_DOCS_BROKEN); see @suaveplan/demo/docs/errors/DEMO_DOCS_BROKEN.md";
    expect(
      [
        "It broke; fix it",
        `It broke; fix it ${suffix}`,
        "It broke; fix it (DEMO_DOCS_BROKEN)",
        "",
        "It broke (DEMO_DOCS_OTHER)",
      ].map((message) => new SuaveplanError(codes.BROKEN, message).message),
    ).toEqual([
      `It broke; fix it ${suffix}`,
      `It broke; fix it ${suffix}`,
      `It broke; fix it ${suffix}`,
      suffix,
      `It broke (DEMO_DOCS_OTHER) ${suffix}`,
    ]);
    expect(withErrorCode("no page", "DEMO_UNDECLARED")).toBe("no page (DEMO_UNDECLARED)");
  });

  it("every code of this package points at its page in @suaveplan/sandbox-core", () => {
    expect(Object.values(SANDBOX_CODES).map(errorDocsPath)).toEqual(
      Object.values(SANDBOX_CODES).map((code) => `@suaveplan/sandbox-core/docs/errors/${code}.md`),
    );
  });

  it("SuaveplanError carries code, cause and details and renders JSON without the stack", () => {
    const cause = new RangeError("underlying");
    const error = new SuaveplanError("DEMO_BROKEN", "Demo broke because of x; fix x", {
      cause,
      details: { field: "x", limit: 3 },
    });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("SuaveplanError");
    expect(error.code).toBe("DEMO_BROKEN");
    expect(error.message).toBe("Demo broke because of x; fix x (DEMO_BROKEN)");
    expect(error.cause).toBe(cause);
    expect(error.details).toEqual({ field: "x", limit: 3 });
    expect(error.toJSON()).toEqual({
      name: "SuaveplanError",
      code: "DEMO_BROKEN",
      message: "Demo broke because of x; fix x (DEMO_BROKEN)",
      details: { field: "x", limit: 3 },
    });
    expect(JSON.parse(JSON.stringify(error))).toEqual(error.toJSON());
    expect(new SuaveplanError("DEMO_BROKEN", "already tagged (DEMO_BROKEN)").message).toBe(
      "already tagged (DEMO_BROKEN)",
    );
    expect(new SuaveplanError("DEMO_PLAIN", "no details").toJSON()).toEqual({
      name: "SuaveplanError",
      code: "DEMO_PLAIN",
      message: "no details (DEMO_PLAIN)",
    });
  });

  it("SandboxError is a SuaveplanError with a SANDBOX code, recognised by the guards", () => {
    const error = new SandboxError(SANDBOX_CODES.TIMEOUT, "Execution exceeded timeout 100 ms");
    expect(error).toBeInstanceOf(SuaveplanError);
    expect(error.name).toBe("SandboxError");
    expect(error.message).toBe(
      "Execution exceeded timeout 100 ms (SANDBOX_TIMEOUT); see @suaveplan/sandbox-core/docs/errors/SANDBOX_TIMEOUT.md",
    );
    expect(isSandboxError(error)).toBe(true);
    expect(isSandboxError(error, "SANDBOX_TIMEOUT")).toBe(true);
    expect(isSandboxError(error, "SANDBOX_RATE_LIMITED")).toBe(false);
    expect(isSuaveplanError(error, "SANDBOX_TIMEOUT")).toBe(true);
    expect(isSandboxError(new SuaveplanError("SANDBOX_TIMEOUT", "lookalike"))).toBe(false);
    expect(isSuaveplanError(new Error("plain"))).toBe(false);
  });
});
