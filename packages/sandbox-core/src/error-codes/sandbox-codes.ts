import { defineCodes } from "./define-codes.js";
import { SuaveplanError, type SuaveplanErrorOptions } from "./suaveplan-error.js";

/**
 * Every error code of the sandbox packages. A `SandboxResult.errorCode` and a
 * thrown {@link SandboxError}'s `code` are always one of these values.
 */
export const SANDBOX_CODES = defineCodes(
  "SANDBOX",
  [
    "INVALID_CONFIG",
    "INVALID_OPTIONS",
    "INVALID_MODULE",
    "BLOCKED_MODULE",
    "RATE_LIMITED",
    "TIMEOUT",
    "MEMORY_EXCEEDED",
    "CODE_BLOCKED",
    "CODE_TOO_LONG",
    "ENGINE_DISPOSED",
    "ENGINE_FAILED",
    "ENGINE_CRASHED",
    "ENGINE_UNAVAILABLE",
    "GUEST_ERROR",
    "SYNTAX_ERROR",
    "TYPECHECK_FAILED",
    "RESULT_NOT_TRANSFERABLE",
    "CANCELLED",
    "WORKER_FAILED",
    "SPAWN_FAILED",
    "POOL_EXHAUSTED",
    "STREAM_CLOSED",
    "DISPATCH_TIMEOUT",
    "DISPATCH_LOST",
    "REPLAY_DIVERGED",
  ],
  { docs: "@suaveplan/sandbox-core" },
);

/** One of the {@link SANDBOX_CODES} values, e.g. `"SANDBOX_TIMEOUT"`. */
export type SandboxCode = (typeof SANDBOX_CODES)[keyof typeof SANDBOX_CODES];

/** The error thrown by sandbox APIs; `code` is always a {@link SandboxCode}. */
export class SandboxError extends SuaveplanError<SandboxCode> {
  constructor(code: SandboxCode, message: string, options: SuaveplanErrorOptions = {}) {
    super(code, message, options);
    this.name = "SandboxError";
  }
}

/** True when `value` is a {@link SandboxError} (optionally with the given code). */
export function isSandboxError(value: unknown, code?: SandboxCode): value is SandboxError {
  return value instanceof SandboxError && (code === undefined || value.code === code);
}
