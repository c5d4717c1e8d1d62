import { describe, expect, it } from "vitest";
import type { ConfinedArgv, SandboxExecutionPolicy, SandboxPolicy } from "../policy/sandbox-policy-types.js";
import { assertConfinedPolicy } from "./assert-confined-policy.js";
import { SandboxPolicyError } from "./sandbox-errors.js";
import { SandboxProvider } from "./sandbox-provider.js";

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("assertConfinedPolicy", () => {
  it("accepts read-only and workspace-write with an absolute root", () => {
    expect(() => assertConfinedPolicy({ mode: "read-only", workspaceRoot: "/w" })).not.toThrow();
    expect(() =>
      assertConfinedPolicy({ mode: "workspace-write", workspaceRoot: "/w", sessionId: "s" }),
    ).not.toThrow();
  });

  it("rejects danger-full-access with SANDBOX_INVALID_POLICY naming policy.mode", () => {
    const error = thrown(() => assertConfinedPolicy({ mode: "danger-full-access", workspaceRoot: "/w" }));
    expect(error).toBeInstanceOf(SandboxPolicyError);
    expect((error as SandboxPolicyError).code).toBe("SANDBOX_INVALID_POLICY");
    expect((error as SandboxPolicyError).message).toBe(
      'policy.mode "danger-full-access" cannot be confined: a provider only accepts "read-only" or "workspace-write"; a danger-full-access consumer spawns its own argv without calling the provider (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
    );
  });

  it("rejects unknown modes, relative roots and non-string session ids, naming the field", () => {
    const bad = [
      [
        { mode: "write-all", workspaceRoot: "/w" },
        'policy.mode must be "read-only" or "workspace-write", got "write-all"',
      ],
      [{ mode: "read-only", workspaceRoot: "w" }, "policy.workspaceRoot must be a non-empty absolute path"],
      [{ mode: "read-only", workspaceRoot: "" }, "policy.workspaceRoot must be a non-empty absolute path"],
      [
        { mode: "read-only", workspaceRoot: "/w", sessionId: 7 },
        "policy.sessionId must be a string when present, got number",
      ],
    ] as const;
    for (const [policy, message] of bad) {
      const error = thrown(() => assertConfinedPolicy(policy as unknown as SandboxExecutionPolicy));
      expect((error as Error).message).toBe(
        `${message} (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md`,
      );
    }
    expect(
      (thrown(() => assertConfinedPolicy(null as unknown as SandboxExecutionPolicy)) as Error).message,
    ).toBe(
      "policy must be an object with mode and workspaceRoot (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
    );
  });

  it("is available to SandboxProvider implementations as a protected guard", () => {
    class EchoProvider extends SandboxProvider {
      confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv {
        this.assertConfinedPolicy(policy);
        return {
          argv: ["runner", ...argv],
          enforcement: "full",
          denialSignatures: [],
          runnerFailureRules: [],
        };
      }
    }
    const provider = new EchoProvider();
    const sneaky = { mode: "danger-full-access", workspaceRoot: "/w" } as unknown as SandboxPolicy;
    expect((thrown(() => provider.confine(["true"], sneaky)) as SandboxPolicyError).code).toBe(
      "SANDBOX_INVALID_POLICY",
    );
    expect(provider.confine(["true"], { mode: "read-only", workspaceRoot: "/w" }).argv).toEqual([
      "runner",
      "true",
    ]);
  });
});
