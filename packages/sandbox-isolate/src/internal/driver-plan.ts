import type { LogEntry } from "@suaveplan/sandbox-core/types";
import type { DriverPlan, ExecutionRequest } from "@suaveplan/sandbox-guest";

/** The driver's plan for one request: its limits, payload and log sink (as `startVmExecution` builds it). */
export function driverPlan(
  request: ExecutionRequest,
  onLog: ((entry: LogEntry) => void) | undefined,
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
    onLog,
  };
}
