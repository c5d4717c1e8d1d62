import {
  type ConfinedPwshResult,
  type RunConfinedPwshOptions,
  runConfinedPwsh,
} from "@suaveplan/dsh-pwsh-sandbox";
import type { SandboxPolicyRequest } from "@suaveplan/dsh-sandbox";
import type { Context } from "cordis";
import "./sandbox-services.js";

declare module "cordis" {
  interface Context {
    /** Confined PowerShell for tool layers: the policy from `ctx.sandboxPolicy`, the confinement from `ctx.sandbox`. */
    pwshSandbox: PwshSandbox;
  }
}

/** One call of {@link PwshSandbox.run}: whose policy (session, explicit mode) plus `runConfinedPwsh`'s options. */
export interface PwshSandboxRequest extends SandboxPolicyRequest, Omit<RunConfinedPwshOptions, "provider"> {}

/** `ctx.pwshSandbox`: `runConfinedPwsh` as a Cordis consumer of `ctx.sandbox` and `ctx.sandboxPolicy`. */
export interface PwshSandbox {
  /**
   * Resolve the policy for this call (`ctx.sandboxPolicy.resolve({ session, mode })`)
   * and run `script` with `pwsh -Command` confined by `ctx.sandbox` under it.
   * Under `danger-full-access` the script runs unconfined and `ctx.sandbox` is not called.
   */
  run(script: string, request?: PwshSandboxRequest): Promise<ConfinedPwshResult>;
}

/** Cordis plugin registering `ctx.pwshSandbox`; like `bashSandboxPlugin` it injects both services. */
export const pwshSandboxPlugin = {
  name: "suaveplan-pwsh-sandbox",
  inject: ["sandbox", "sandboxPolicy"],
  apply(ctx: Context): void {
    const pwsh: PwshSandbox = {
      run(script, request = {}) {
        const { session, mode, ...options } = request;
        const policy = ctx.sandboxPolicy.resolve({
          ...(session === undefined ? {} : { session }),
          ...(mode === undefined ? {} : { mode }),
        });
        return runConfinedPwsh(script, policy, { ...options, provider: ctx.sandbox });
      },
    };
    ctx.set("pwshSandbox", pwsh);
  },
};
