import {
  type ConfinedBashResult,
  type RunConfinedBashOptions,
  runConfinedBash,
} from "@suaveplan/dsh-bash-sandbox";
import type { SandboxPolicyRequest } from "@suaveplan/dsh-sandbox";
import type { Context } from "cordis";
import "./sandbox-services.js";

declare module "cordis" {
  interface Context {
    /** Confined bash for tool layers: the policy from `ctx.sandboxPolicy`, the confinement from `ctx.sandbox`. */
    bashSandbox: BashSandbox;
  }
}

/** One call of {@link BashSandbox.run}: whose policy (session, explicit mode) plus `runConfinedBash`'s options. */
export interface BashSandboxRequest extends SandboxPolicyRequest, Omit<RunConfinedBashOptions, "provider"> {}

/** `ctx.bashSandbox`: `runConfinedBash` as a Cordis consumer of `ctx.sandbox` and `ctx.sandboxPolicy`. */
export interface BashSandbox {
  /**
   * Resolve the policy for this call (`ctx.sandboxPolicy.resolve({ session, mode })`)
   * and run `command` with `bash -c` confined by `ctx.sandbox` under it, in
   * `cwd` (default: the policy's workspace root, i.e. the session's cwd).
   * Under `danger-full-access` the command runs unconfined and `ctx.sandbox` is not called.
   */
  run(command: string, request?: BashSandboxRequest): Promise<ConfinedBashResult>;
}

/**
 * Cordis plugin registering `ctx.bashSandbox`. It injects `sandbox` and
 * `sandboxPolicy`, so it is active only while both services are, and every
 * call reads them afresh.
 */
export const bashSandboxPlugin = {
  name: "suaveplan-bash-sandbox",
  inject: ["sandbox", "sandboxPolicy"],
  apply(ctx: Context): void {
    const bash: BashSandbox = {
      run(command, request = {}) {
        const { session, mode, ...options } = request;
        const policy = ctx.sandboxPolicy.resolve({
          ...(session === undefined ? {} : { session }),
          ...(mode === undefined ? {} : { mode }),
        });
        return runConfinedBash(command, policy, { ...options, provider: ctx.sandbox });
      },
    };
    ctx.set("bashSandbox", bash);
  },
};
