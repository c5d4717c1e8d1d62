import { defineCodes, SuaveplanError, type SuaveplanErrorOptions } from "@suaveplan/sandbox-core/error-codes";

/** Error codes of the process-sandbox packages. */
export const PROCESS_SANDBOX_CODES = defineCodes("SANDBOX", ["UNAVAILABLE", "INVALID_POLICY"], {
  docs: "@suaveplan/dsh-sandbox",
});

/**
 * Thrown by {@link SandboxProvider.confine} when no backend can enforce the
 * policy here. Confinement fails closed: there is never an unconfined fallback.
 */
export class SandboxUnavailableError extends SuaveplanError<"SANDBOX_UNAVAILABLE"> {
  constructor(message: string, options: SuaveplanErrorOptions = {}) {
    super(PROCESS_SANDBOX_CODES.UNAVAILABLE, message, options);
    this.name = "SandboxUnavailableError";
  }
}

/**
 * Thrown when a sandbox policy, policy request or service option is malformed
 * — including a `danger-full-access` policy handed to a provider. The message
 * names the offending field; it never carries host paths.
 */
export class SandboxPolicyError extends SuaveplanError<"SANDBOX_INVALID_POLICY"> {
  constructor(message: string, options: SuaveplanErrorOptions = {}) {
    super(PROCESS_SANDBOX_CODES.INVALID_POLICY, message, options);
    this.name = "SandboxPolicyError";
  }
}
