import type { ExecutionRequest } from "@suaveplan/sandbox-guest";

/**
 * A tiny execution the worker runs once while it boots, before it reports
 * `ready`: it compiles the shared kernel and drives its common paths (boot,
 * console formatting, settle, the codec) so the caller's execution does not
 * pay for that. Its outcome is discarded.
 */
export const WARM_UP_REQUEST: ExecutionRequest = Object.freeze({
  code: "console.log({ a: [1, 'b'] }); ({ n: 1, list: [new Date(0)] })",
  contextText: "",
  modulesText: "",
  sourceModules: [],
  timeoutMs: 5_000,
  maxOutputSize: 1024,
  maxLogLines: 10,
  maxTimers: 1,
  maxTimerCreations: 1,
  maxResultBytes: 64 * 1024,
  maxCallBytes: 1024,
});
