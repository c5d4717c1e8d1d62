import type { ConfinedArgv, SandboxExecutionPolicy, SandboxPolicy } from "../policy/sandbox-policy-types.js";
import { assertConfinedPolicy } from "./assert-confined-policy.js";

/**
 * The abstract process-sandbox seam. `confine` returns an enforced argv or
 * throws; silently passing a confining policy through unconfined is forbidden.
 * Every implementation calls {@link SandboxProvider.assertConfinedPolicy} (or
 * the standalone {@link assertConfinedPolicy}) first, so a `danger-full-access`
 * policy that slipped past the type system is rejected at run time too.
 */
export abstract class SandboxProvider {
  /**
   * Wrap `argv` so it executes confined under `policy` on this host; the
   * caller spawns the returned argv in place of its own.
   * @param argv - the exact argv about to be spawned (program plus arguments),
   *   not a shell string — a shell consumer passes `['bash', '-c', command]`.
   * @param policy - the file-effect policy for this one execution.
   * @throws SandboxPolicyError (`SANDBOX_INVALID_POLICY`) for a non-confining or malformed policy.
   * @throws SandboxUnavailableError (`SANDBOX_UNAVAILABLE`) when nothing here can enforce it.
   */
  abstract confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv;

  /** Run-time guard every `confine` implementation calls first; see {@link assertConfinedPolicy}. */
  protected assertConfinedPolicy(policy: SandboxExecutionPolicy): asserts policy is SandboxPolicy {
    assertConfinedPolicy(policy);
  }
}
