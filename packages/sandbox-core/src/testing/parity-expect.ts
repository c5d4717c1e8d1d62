import { SANDBOX_CODES } from "../error-codes/sandbox-codes.js";
import type { SandboxResult } from "../types/sandbox-types.js";

/** A guest Error thrown at one guest position (one frame), as an engine reports it in the parity table. */
export function thrownAt(
  name: string,
  message: string,
  line: number,
  column: number,
): Omit<SandboxResult, "duration" | "memoryUsed"> {
  return {
    success: false,
    error: `${name}: ${message} (line ${line}, column ${column}) (${SANDBOX_CODES.GUEST_ERROR})`,
    errorCode: SANDBOX_CODES.GUEST_ERROR,
    logs: [],
    guestError: {
      name,
      message,
      stack: `${name}: ${message}\n    at sandbox.js:${line}:${column}`,
      line,
      column,
    },
  };
}
