import { defineCodes, SuaveplanError, type SuaveplanErrorOptions } from "@suaveplan/sandbox-core/error-codes";
import type { ConfinedArgv, SandboxPolicy } from "../policy/sandbox-policy-types.js";

/** Error codes of the process-sandbox packages. */
export const PROCESS_SANDBOX_CODES = defineCodes("SANDBOX", ["UNAVAILABLE", "INVALID_POLICY"]);

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
 * The abstract process-sandbox seam. `confine` returns an enforced argv or
 * throws; silently passing a confining policy through unconfined is forbidden.
 */
export abstract class SandboxProvider {
  /**
   * Wrap `argv` so it executes confined under `policy` on this host; the
   * caller spawns the returned argv in place of its own.
   * @param argv - the exact argv about to be spawned (program plus arguments),
   *   not a shell string — a shell consumer passes `['bash', '-c', command]`.
   * @param policy - the file-effect policy for this one execution.
   */
  abstract confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv;
}
