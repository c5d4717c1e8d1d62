import { defineCodes, SuaveplanError, type SuaveplanErrorOptions } from "@suaveplan/sandbox-core/error-codes";

/**
 * Error codes of `@suaveplan/api-sandbox-vm` (one page each under `docs/errors/`).
 * Guest-facing ones (`EVAL_REJECTED`, `INDIRECT_EVAL_REJECTED`, `MODULE_IMPORT_FORBIDDEN`,
 * `DATA_CLONE_FAILED`, `FS_FAILED`, `FETCH_FAILED`) are raised inside the sandbox as guest-realm
 * errors carrying `code`, and surface on the host as {@link VmSandboxError}s with the same code.
 */
export const SAND_VM_CODES = defineCodes(
  "SAND_VM",
  [
    "INVALID_OPTIONS",
    "UNSUPPORTED_RUNTIME",
    "EVAL_REJECTED",
    "INDIRECT_EVAL_REJECTED",
    "MODULE_IMPORT_FORBIDDEN",
    "MODULE_LOAD_FAILED",
    "PLUGIN_THREW",
    "EXPORT_NOT_FOUND",
    "DATA_CLONE_FAILED",
    "TIMEOUT",
    "DISPOSED",
    "WORKER_FAILED",
    "MEMORY_EXCEEDED",
    "OUTPUT_EXCEEDED",
    "FS_FAILED",
    "FETCH_FAILED",
  ],
  { docs: "@suaveplan/api-sandbox-vm" },
);

/** One of the {@link SAND_VM_CODES} values. */
export type SandVmCode = (typeof SAND_VM_CODES)[keyof typeof SAND_VM_CODES];

/** The error this package throws on the host; `code` is always a {@link SandVmCode}. */
export class VmSandboxError extends SuaveplanError<SandVmCode> {
  constructor(code: SandVmCode, message: string, options: SuaveplanErrorOptions = {}) {
    super(code, message, options);
    this.name = "VmSandboxError";
  }
}

/** True when `value` is a {@link VmSandboxError} (optionally with the given code). */
export function isVmSandboxError(value: unknown, code?: SandVmCode): value is VmSandboxError {
  return value instanceof VmSandboxError && (code === undefined || value.code === code);
}
