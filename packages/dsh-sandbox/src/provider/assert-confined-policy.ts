import { isAbsolute } from "node:path";
import type { SandboxExecutionPolicy, SandboxPolicy } from "../policy/sandbox-policy-types.js";
import { SandboxPolicyError } from "./sandbox-errors.js";

/**
 * Assert at run time that `policy` is a confining {@link SandboxPolicy}: mode
 * `read-only` or `workspace-write` (never `danger-full-access`, which a
 * consumer must handle by not calling the provider at all), an absolute
 * `workspaceRoot`, and a string `sessionId` when present.
 * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) naming the bad field.
 */
export function assertConfinedPolicy(policy: SandboxExecutionPolicy): asserts policy is SandboxPolicy {
  if (typeof policy !== "object" || policy === null) {
    throw new SandboxPolicyError("policy must be an object with mode and workspaceRoot");
  }
  const mode: unknown = policy.mode;
  if (mode === "danger-full-access") {
    throw new SandboxPolicyError(
      'policy.mode "danger-full-access" cannot be confined: a provider only accepts "read-only" or "workspace-write"; a danger-full-access consumer spawns its own argv without calling the provider',
    );
  }
  if (mode !== "read-only" && mode !== "workspace-write") {
    throw new SandboxPolicyError(
      `policy.mode must be "read-only" or "workspace-write", got ${describe(mode)}`,
    );
  }
  const root: unknown = policy.workspaceRoot;
  if (typeof root !== "string" || root.length === 0 || !isAbsolute(root) || root.includes("\0")) {
    throw new SandboxPolicyError("policy.workspaceRoot must be a non-empty absolute path");
  }
  const sessionId: unknown = policy.sessionId;
  if (sessionId !== undefined && typeof sessionId !== "string") {
    throw new SandboxPolicyError(
      `policy.sessionId must be a string when present, got ${describe(sessionId)}`,
    );
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null) return "null";
  return typeof value;
}
