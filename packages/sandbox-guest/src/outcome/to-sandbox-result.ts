import { SANDBOX_CODES, type SandboxCode } from "@suaveplan/sandbox-core/error-codes";
import { byteLength } from "@suaveplan/sandbox-core/resource-limiter";
import { failure, type LogEntry, type SandboxResult, type SandboxUsage } from "@suaveplan/sandbox-core/types";
import type { ErrorRecord } from "@suaveplan/sandbox-kernel";
import { createHostCodec } from "@suaveplan/sandbox-kernel";
import type { GuestOutcome } from "../protocol/protocol.js";

const codec = createHostCodec();

/** What the application's side knows besides the outcome. */
export interface ResultExtras {
  duration: number;
  logs: LogEntry[];
  memoryUsed?: number | undefined;
  /** CPU time the engine measured for the guest, in ms. */
  cpuMs?: number | undefined;
  /** Guest→host calls made and the bytes of their payloads (codec text × 2, both ways). */
  toolCalls?: number | undefined;
  toolBytes?: number | undefined;
  /** The code a `fault` reports: `ENGINE_FAILED` by default, `WORKER_FAILED` / `SPAWN_FAILED` for a death. */
  faultCode?: SandboxCode;
}

/** `a function`, `an Error`, or a phrase such as `nested deeper than 1000 levels` as it is. */
export function described(what: string): string {
  if (/^(nested|larger|more|a |an )/.test(what)) return what;
  return /^[aeiouAEIOU]/.test(what) ? `an ${what}` : `a ${what}`;
}

/** `TypeError: boom`, or `Uncaught 'text'` for a thrown non-error. */
export function errorHeadline(error: ErrorRecord): string {
  const head =
    error.name === ""
      ? `Uncaught ${error.message}`
      : error.message === ""
        ? error.name
        : `${error.name}: ${error.message}`;
  if (error.module !== undefined) return `module ${error.module} failed: ${head}`;
  return error.unhandledRejection === true ? `Unhandled promise rejection: ${head}` : head;
}

function located(error: ErrorRecord): string {
  const head = errorHeadline(error);
  return error.line === undefined ? head : `${head} (line ${error.line}, column ${error.column ?? 0})`;
}

/**
 * The one mapping from a {@link GuestOutcome} to a `SandboxResult`, with one
 * error code per kind of failure. Every engine ends here.
 */
export function toSandboxResult(outcome: GuestOutcome, extras: ResultExtras): SandboxResult {
  const usage: SandboxUsage = {
    wallMs: extras.duration,
    outputBytes: extras.logs.reduce((sum, entry) => sum + byteLength(entry.message), 0),
    toolCalls: extras.toolCalls ?? 0,
    toolBytes: extras.toolBytes ?? 0,
  };
  if (extras.cpuMs !== undefined) usage.cpuMs = extras.cpuMs;
  if (extras.memoryUsed !== undefined) usage.heapBytes = extras.memoryUsed;
  const base = { duration: extras.duration, logs: extras.logs, usage };
  const withMemory = extras.memoryUsed === undefined ? base : { ...base, memoryUsed: extras.memoryUsed };
  switch (outcome.kind) {
    case "value": {
      let value: unknown;
      try {
        value = codec.decode(outcome.text);
      } catch {
        return failure(
          SANDBOX_CODES.ENGINE_FAILED,
          "The engine sent a result that could not be decoded",
          withMemory,
        );
      }
      return { ...withMemory, success: true, result: value };
    }
    case "error":
      return failure(SANDBOX_CODES.GUEST_ERROR, located(outcome.error), {
        ...withMemory,
        guestError: { ...outcome.error },
      });
    case "syntax":
      return failure(SANDBOX_CODES.SYNTAX_ERROR, located(outcome.error), {
        ...withMemory,
        guestError: { ...outcome.error },
      });
    case "untransferable":
      return failure(
        SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
        `${outcome.path} cannot leave the sandbox: it is ${described(outcome.what)}; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays)`,
        withMemory,
      );
    case "timeout":
      return failure(
        SANDBOX_CODES.TIMEOUT,
        `Execution timed out after ${outcome.timeoutMs} ms (sync code, promises and timers share this budget)`,
        withMemory,
      );
    case "memory":
      return failure(
        SANDBOX_CODES.MEMORY_EXCEEDED,
        outcome.limitBytes === undefined
          ? "Execution exceeded its memory limit"
          : `Execution exceeded its memory limit of ${outcome.limitBytes} bytes`,
        withMemory,
      );
    case "cancelled":
      return failure(SANDBOX_CODES.CANCELLED, "Execution was cancelled", withMemory);
    case "disposed":
      return failure(SANDBOX_CODES.ENGINE_DISPOSED, outcome.message, withMemory);
    case "fault":
      return failure(extras.faultCode ?? SANDBOX_CODES.ENGINE_FAILED, outcome.message, withMemory);
  }
}
