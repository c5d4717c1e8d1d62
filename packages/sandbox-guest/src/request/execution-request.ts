import { withoutErrorCode } from "@suaveplan/sandbox-core/error-codes";
import type { WrapShift } from "@suaveplan/sandbox-core/guest-script";
import type { DriverPlan, SourceModule } from "../driver/guest-driver.js";

/** Console lines allowed per execution by default. */
export const DEFAULT_MAX_LOG_LINES = 10_000;
/** Pending timers allowed per execution by default. */
export const DEFAULT_MAX_TIMERS = 1_000;
/** Timers created over one execution, per pending timer allowed. */
export const TIMER_CREATIONS_PER_PENDING = 100;
/** Largest payload of one guest→host call by default, in bytes. */
export const DEFAULT_MAX_CALL_BYTES = 1024 * 1024;

/**
 * One execution as plain data: what a transport carries to the realm's side
 * (structured clone for a worker, JSON for a child) and what the driver runs.
 */
export interface ExecutionRequest {
  /** The prepared guest source (`prepareGuestCode().source`). */
  code: string;
  /** How preparing moved positions (top-level await wrapper), so guest errors name the original line:column. */
  shift?: WrapShift | undefined;
  /** Context globals as codec text, or "" (none, or all in {@link contextValues}). */
  contextText: string;
  /**
   * Context globals handed over as they are, for a realm in the host's own
   * isolate (vm): set only when the engine asks (`RequestDefaults.contextByReference`)
   * and every value is a string, number, boolean, null or undefined, which carry no realm
   * and is the same on both sides — a 14 KB string is then not encoded, copied and parsed.
   */
  contextValues?: [string, ContextPrimitive][] | undefined;
  /** Data modules as JSON of `[[name, codecText], …]`, or "". */
  modulesText: string;
  /** Source modules, in registration order. */
  sourceModules: SourceModule[];
  timeoutMs: number;
  maxOutputSize: number;
  maxLogLines: number;
  maxTimers: number;
  maxTimerCreations: number;
  maxResultBytes: number;
  maxCallBytes: number;
  /** Names of the host functions the guest may call as `tools.<name>(input)`; none when absent. */
  tools?: string[] | undefined;
  /**
   * Set by the host: the code is a provably bounded pure expression (see
   * `isStraightLine`) and no source module is registered (a getter from one
   * could run user code), so its first evaluation may run without node's
   * watchdog thread (vm, worker, spawn) or synchronously on the thread that
   * holds the isolate (isolate, still under isolated-vm's timeout). Engines whose runner gets the request over a channel
   * the guest could reach do not read it.
   */
  straightLine?: boolean | undefined;
}

/** A context value that may cross by reference (see {@link ExecutionRequest.contextValues}). */
export type ContextPrimitive = string | number | boolean | null | undefined;

/** The driver's plan for one request: its limits and payload, plus the hooks of the engine running it. */
export function driverPlanOf(
  request: ExecutionRequest,
  hooks: Pick<DriverPlan, "onLog" | "onCall"> = {},
): DriverPlan {
  return {
    timeoutMs: request.timeoutMs,
    maxOutputSize: request.maxOutputSize,
    maxLogLines: request.maxLogLines,
    maxTimers: request.maxTimers,
    maxTimerCreations: request.maxTimerCreations,
    maxResultBytes: request.maxResultBytes,
    maxCallBytes: request.maxCallBytes,
    shift: request.shift,
    tools: request.tools,
    contextText: request.contextText,
    modulesText: request.modulesText,
    sourceModules: request.sourceModules,
    onLog: hooks.onLog,
    onCall: hooks.onCall,
  };
}

/** An error's message without the trailing `(SANDBOX_…)` code, to be re-coded. */
export function withoutCode(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return withoutErrorCode(message);
}
