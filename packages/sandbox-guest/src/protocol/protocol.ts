import type { LogLevel } from "@suaveplan/sandbox-core/types";
import type { ErrorRecord } from "@suaveplan/sandbox-kernel";

/**
 * How one execution ended, as plain JSON data: what the driver produces next
 * to the realm and what a transport (direct call, `postMessage`, fd 3) carries
 * to the application, where {@link toSandboxResult} turns it into a
 * `SandboxResult`. `value.text` is codec text, decoded once, on the
 * application's side.
 */
export type GuestOutcome =
  | { kind: "value"; text: string }
  | { kind: "error"; error: ErrorRecord }
  | { kind: "syntax"; error: ErrorRecord }
  | { kind: "untransferable"; path: string; what: string }
  | { kind: "timeout"; timeoutMs: number }
  | { kind: "memory"; limitBytes: number | undefined }
  | { kind: "cancelled" }
  | { kind: "disposed"; message: string }
  | { kind: "fault"; message: string };

/** A guest→host call: `name` with its codec-text input; answered by a {@link CallReply}. */
export interface GuestCall {
  /** Unique within the execution. */
  id: number;
  /** What the guest asked for (a tool name, in the host-tools layer). */
  name: string;
  /** The input, as codec text. */
  text: string;
}

/** The host's answer to a {@link GuestCall}: codec text when `ok`, else `{ name, message }` JSON. */
export interface CallReply {
  id: number;
  ok: boolean;
  text: string;
}

/** Messages a transport carries from the realm's side to the application's side. */
export type DriverEvent =
  | { type: "log"; level: LogLevel; message: string }
  | { type: "call"; call: GuestCall }
  | {
      type: "done";
      outcome: GuestOutcome;
      memoryUsed: number | undefined;
      /** CPU time the realm measured, in ms. */
      cpuMs?: number | undefined;
      /** Guest→host calls accepted and the bytes of their payloads (see `DriverResult`). */
      toolCalls?: number;
      toolBytes?: number;
    };

/** The log levels a guest may use, in the order the kernel names them. */
export const LOG_LEVELS: readonly LogLevel[] = Object.freeze(["log", "info", "warn", "error", "debug"]);
