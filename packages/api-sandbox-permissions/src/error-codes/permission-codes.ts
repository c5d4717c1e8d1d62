import { defineCodes, SuaveplanError, type SuaveplanErrorOptions } from "@suaveplan/sandbox-core/error-codes";

/**
 * Error codes of `@suaveplan/api-sandbox-permissions`:
 * - `PERMISSION_DENIED` — a capability call was refused by the policy (raised by callers that
 *   turn a denied {@link PermissionDecision} into an error, e.g. the fetch redirect helper).
 * - `PERMISSION_INVALID_POLICY` — the policy failed validation; the message names the entry.
 * - `PERMISSION_TOO_MANY_REDIRECTS` — a checked fetch followed more redirects than allowed.
 */
export const PERMISSION_CODES = defineCodes(
  "PERMISSION",
  ["DENIED", "INVALID_POLICY", "TOO_MANY_REDIRECTS"],
  {
    docs: "@suaveplan/api-sandbox-permissions",
  },
);

/** One of the {@link PERMISSION_CODES} values. */
export type PermissionCode = (typeof PERMISSION_CODES)[keyof typeof PERMISSION_CODES];

/** The error thrown by this package; `code` is always a {@link PermissionCode}. */
export class PermissionError extends SuaveplanError<PermissionCode> {
  constructor(code: PermissionCode, message: string, options: SuaveplanErrorOptions = {}) {
    super(code, message, options);
    this.name = "PermissionError";
  }
}

/** True when `value` is a {@link PermissionError} (optionally with the given code). */
export function isPermissionError(value: unknown, code?: PermissionCode): value is PermissionError {
  return value instanceof PermissionError && (code === undefined || value.code === code);
}
