import { MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import type { ExecutionRequest } from "./execution-request.js";

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const LIMITS = [
  "timeoutMs",
  "maxOutputSize",
  "maxLogLines",
  "maxTimers",
  "maxTimerCreations",
  "maxResultBytes",
  "maxCallBytes",
] as const;
const SHIFT_FIELDS = ["line", "column", "length"] as const;

/**
 * The one check of an `ExecutionRequest` that crossed to the realm's side —
 * a spawn child's stdin (JSON), a worker's or an isolate helper's message
 * (structured clone) — keeping only its known fields. Throws a plain `Error`
 * naming the first bad field; the side that reads it reports it as a
 * `fault`. Hand-written rather than a schema: it runs in every child and
 * worker, whose start-up a schema library would add to.
 * (`contextValues` never crosses: it is for a realm in the host's isolate.)
 */
export function readExecutionRequest(raw: unknown): ExecutionRequest {
  if (!isRecord(raw)) throw new Error("request: is not one object");
  for (const field of ["code", "contextText", "modulesText"] as const) {
    if (typeof raw[field] !== "string") throw new Error(`request.${field}: must be a string`);
  }
  const request = {
    code: raw.code,
    contextText: raw.contextText,
    modulesText: raw.modulesText,
    sourceModules: sourceModulesOf(raw.sourceModules),
  } as ExecutionRequest;
  for (const field of LIMITS) {
    const value = raw[field];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
      throw new Error(`request.${field}: must be a positive integer`);
    }
    request[field] = value;
  }
  if (request.timeoutMs > MAX_TIMER_MS)
    throw new Error(`request.timeoutMs: must be at most ${MAX_TIMER_MS} (ms)`);
  if (raw.shift !== undefined) request.shift = shiftOf(raw.shift);
  if (raw.tools !== undefined) {
    if (!Array.isArray(raw.tools) || !raw.tools.every((name) => typeof name === "string")) {
      throw new Error("request.tools: must be an array of strings");
    }
    request.tools = [...raw.tools];
  }
  if (raw.straightLine !== undefined) {
    if (typeof raw.straightLine !== "boolean") throw new Error("request.straightLine: must be a boolean");
    request.straightLine = raw.straightLine;
  }
  return request;
}

function sourceModulesOf(value: unknown): ExecutionRequest["sourceModules"] {
  if (!Array.isArray(value)) throw new Error("request.sourceModules: must be an array");
  return value.map((module: unknown, index) => {
    if (!isRecord(module) || typeof module.name !== "string" || !IDENTIFIER.test(module.name)) {
      throw new Error(`request.sourceModules[${index}].name: must be a JavaScript identifier`);
    }
    if (typeof module.source !== "string")
      throw new Error(`request.sourceModules[${index}].source: must be a string`);
    return { name: module.name, source: module.source };
  });
}

function shiftOf(value: unknown): NonNullable<ExecutionRequest["shift"]> {
  if (!isRecord(value)) throw new Error("request.shift: must be an object");
  if (!Array.isArray(value.insertions)) throw new Error("request.shift.insertions: must be an array");
  const insertions = value.insertions.map((entry: unknown, index): [number, number, number] => {
    if (!Array.isArray(entry) || entry.length !== SHIFT_FIELDS.length) {
      throw new Error(`request.shift.insertions[${index}]: must be [line, column, length]`);
    }
    SHIFT_FIELDS.forEach((field, at) => {
      const n: unknown = entry[at];
      if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) {
        throw new Error(`request.shift.insertions[${index}] (${field}): must be a non-negative integer`);
      }
    });
    return [entry[0], entry[1], entry[2]];
  });
  return { insertions };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
