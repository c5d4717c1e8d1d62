import { withErrorCode } from "./define-codes.js";

/** Structured, JSON-safe detail attached to a {@link SuaveplanError}. */
export type ErrorDetails = Readonly<Record<string, unknown>>;

/** Options accepted by {@link SuaveplanError}. */
export interface SuaveplanErrorOptions {
  /** The underlying error, passed through unchanged. */
  cause?: unknown;
  /** Structured, JSON-safe facts about the failure (field names, limits, …). */
  details?: ErrorDetails;
}

/** JSON shape produced by {@link SuaveplanError.toJSON}. */
export interface SuaveplanErrorJSON {
  name: string;
  code: string;
  message: string;
  details?: ErrorDetails;
}

/**
 * The one error base of every Suaveplan package: a readonly `code` from a
 * closed set (see {@link defineCodes}), a message that says what happened,
 * why and how to fix it, the original `cause`, and structured `details`.
 * The message ends with the code and where its page ships, e.g.
 * `… (SANDBOX_TIMEOUT); see @suaveplan/sandbox-core/docs/errors/SANDBOX_TIMEOUT.md`.
 */
export class SuaveplanError<Code extends string = string> extends Error {
  /** Stable machine-readable code, e.g. `SANDBOX_TIMEOUT`. */
  readonly code: Code;
  /** Structured facts about the failure. */
  readonly details: ErrorDetails | undefined;

  constructor(code: Code, message: string, options: SuaveplanErrorOptions = {}) {
    super(withErrorCode(message, code), { cause: options.cause });
    this.name = "SuaveplanError";
    this.code = code;
    this.details = options.details;
  }

  /** A JSON-safe rendering: name, code, message and details (never the stack or cause). */
  toJSON(): SuaveplanErrorJSON {
    const json: SuaveplanErrorJSON = { name: this.name, code: this.code, message: this.message };
    if (this.details !== undefined) json.details = this.details;
    return json;
  }
}

/** True when `value` is a {@link SuaveplanError} (optionally with the given code). */
export function isSuaveplanError(value: unknown, code?: string): value is SuaveplanError {
  return value instanceof SuaveplanError && (code === undefined || value.code === code);
}
