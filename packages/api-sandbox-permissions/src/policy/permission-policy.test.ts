import { describe, expect, it } from "vitest";
import { isPermissionError } from "../error-codes/permission-codes.js";
import { formatPolicyPath, resolvePermissionPolicy } from "./permission-policy.js";

function failure(policy: unknown): { code: string; message: string; details: unknown } {
  try {
    resolvePermissionPolicy(policy, "/");
  } catch (error) {
    if (!isPermissionError(error)) throw error;
    return { code: error.code, message: error.message, details: error.details };
  }
  throw new Error("expected PERMISSION_INVALID_POLICY");
}

describe("permission policy validation", () => {
  it("names the offending entry in index notation", () => {
    const policy = {
      fs: [
        { path: "/a", access: "read" },
        { path: "/b", access: "write" },
        { path: "/c", access: "execute" },
      ],
    };
    expect(failure(policy)).toEqual({
      code: "PERMISSION_INVALID_POLICY",
      message: expect.stringMatching(
        /^Invalid permission policy: policy\.fs\[2\]\.access is invalid: .*\(PERMISSION_INVALID_POLICY\); see @suaveplan\/api-sandbox-permissions\/docs\/errors\/PERMISSION_INVALID_POLICY\.md$/u,
      ),
      details: { field: "policy.fs[2].access", reason: expect.stringContaining("is invalid") },
    });
  });

  it("rejects bad fetch patterns, unknown keys and non-objects", () => {
    expect(failure({ fetch: ["ok.example", "https://x.example/path"] }).details).toEqual({
      field: "policy.fetch[1]",
      reason:
        "is invalid: must look like `[http(s)://]host[:port]` (no path, query, fragment or credentials)",
    });
    expect(failure({ fs: [], network: [] }).details).toMatchObject({ field: "policy" });
    expect(failure(null).details).toMatchObject({ field: "policy" });
    expect(failure({ fs: [{ path: "/a/b**", access: "read" }] }).details).toEqual({
      field: "policy.fs[0].path",
      reason: "is invalid: `**` must be a whole path segment",
    });
  });

  it("defaults every list to empty (deny everything)", () => {
    expect(resolvePermissionPolicy({}, "/")).toEqual({ fs: [], fetch: [], tools: [] });
  });

  it("accepts tool names and names a bad one", () => {
    expect(resolvePermissionPolicy({ tools: ["getWeather", "getWeather", "$x"] }, "/").tools).toEqual([
      "getWeather",
      "$x",
    ]);
    expect(failure({ tools: ["get-weather"] }).details).toEqual({
      field: "policy.tools[0]",
      reason: "is invalid: must be a tool name (a JavaScript identifier)",
    });
  });

  it("formats field paths", () => {
    expect(formatPolicyPath(["fs", 2, "access"])).toBe("policy.fs[2].access");
  });
});
