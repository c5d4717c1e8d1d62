import type { LogLevel } from "@suaveplan/sandbox-core/types";
import { type GuestOutcome, LOG_LEVELS, parseErrorRecord } from "@suaveplan/sandbox-guest";
import type { RunnerFrame } from "../runner/protocol.js";

type Fields = Record<string, unknown>;

/**
 * One line from fd 3 as a {@link RunnerFrame}, keeping only well-typed
 * fields, or the reason it is not one. The child is not trusted to be well
 * formed: a guest that got out of its `vm` context holds fd 3 too.
 */
export function parseRunnerFrame(line: string): RunnerFrame | { malformed: string } {
  let frame: unknown;
  try {
    frame = JSON.parse(line);
  } catch {
    return { malformed: "the runner wrote a line that is not JSON" };
  }
  if (!isFields(frame)) return { malformed: "the runner wrote a frame that is not an object" };
  switch (frame.type) {
    case "start":
      return { type: "start" };
    case "log":
      if (typeof frame.message !== "string" || !LOG_LEVELS.includes(frame.level as LogLevel)) {
        return { malformed: "the runner wrote a malformed log frame" };
      }
      return { type: "log", level: frame.level as LogLevel, message: frame.message };
    case "call": {
      const call = isFields(frame.call) ? frame.call : undefined;
      if (
        call === undefined ||
        !isByteCount(call.id) ||
        typeof call.name !== "string" ||
        typeof call.text !== "string"
      ) {
        return { malformed: "the runner wrote a malformed call frame" };
      }
      return { type: "call", call: { id: call.id, name: call.name, text: call.text } };
    }
    case "done": {
      const outcome = isFields(frame.outcome) ? outcomeOf(frame.outcome) : undefined;
      const { memoryUsed, cpuMs, toolCalls, toolBytes, peakBytes } = frame;
      if (
        outcome === undefined ||
        !optional(memoryUsed, isByteCount) ||
        !optional(cpuMs, isDuration) ||
        !optional(toolCalls, isByteCount) ||
        !optional(toolBytes, isByteCount) ||
        !optional(peakBytes, isByteCount)
      ) {
        return { malformed: "the runner wrote a malformed done frame" };
      }
      const done: Extract<RunnerFrame, { type: "done" }> = {
        type: "done",
        outcome,
        memoryUsed: memoryUsed as number | undefined,
      };
      if (cpuMs !== undefined) done.cpuMs = cpuMs as number;
      if (toolCalls !== undefined) done.toolCalls = toolCalls as number;
      if (toolBytes !== undefined) done.toolBytes = toolBytes as number;
      if (peakBytes !== undefined) done.peakBytes = peakBytes as number;
      return done;
    }
    default:
      return { malformed: "the runner wrote an unknown frame" };
  }
}

function outcomeOf(raw: Fields): GuestOutcome | undefined {
  switch (raw.kind) {
    case "value":
      return typeof raw.text === "string" ? { kind: "value", text: raw.text } : undefined;
    case "error":
    case "syntax":
      return isFields(raw.error)
        ? { kind: raw.kind, error: parseErrorRecord(JSON.stringify(raw.error)) }
        : undefined;
    case "untransferable":
      return typeof raw.path === "string" && typeof raw.what === "string"
        ? { kind: "untransferable", path: raw.path, what: raw.what }
        : undefined;
    case "timeout":
      return isByteCount(raw.timeoutMs) ? { kind: "timeout", timeoutMs: raw.timeoutMs } : undefined;
    case "memory":
      return raw.limitBytes === undefined || isByteCount(raw.limitBytes)
        ? { kind: "memory", limitBytes: raw.limitBytes }
        : undefined;
    case "cancelled":
      return { kind: "cancelled" };
    case "disposed":
    case "fault":
      return typeof raw.message === "string" ? { kind: raw.kind, message: raw.message } : undefined;
    default:
      return undefined;
  }
}

function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A count (bytes, calls, ids): a safe integer, 0 or more. */
function isByteCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** A measured time in ms: finite, 0 or more (not necessarily whole). */
function isDuration(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

function optional(value: unknown, check: (value: unknown) => boolean): boolean {
  return value === undefined || check(value);
}
