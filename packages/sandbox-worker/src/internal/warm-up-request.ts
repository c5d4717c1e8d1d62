import type { ExecutionRequest } from "@suaveplan/sandbox-guest/realm";

/**
 * Guest→host calls the warm-up makes, each answered inside the worker: enough
 * for V8 to compile the call path's functions past its interpreter, so the
 * first calls of a caller's run do not pay for that.
 */
export const WARM_UP_CALLS = 64;

/**
 * A tiny execution the worker runs once while it boots, before it reports
 * `ready`: it compiles the shared kernel and drives its common paths (boot,
 * console formatting, settle, the codec, host calls and their replies) so the caller's execution does not
 * pay for that. Its outcome is discarded.
 */
export const WARM_UP_REQUEST: ExecutionRequest = Object.freeze({
  code: `(async () => { console.log({ a: [1, 'b'] }); for (let i = 0; i < ${WARM_UP_CALLS}; i++) await tools.echo({ i }); return { n: 1, list: [new Date(0)] }; })()`,
  tools: Object.freeze(["echo"]) as string[],
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

/**
 * The second warm-up: a straight-line expression with a primitive value, run as a caller's
 * `2 + 3` is (no watchdog, settled at once). Its value is encoded by the host side's codec
 * (`settlePrimitive`), which nothing else in a worker compiles before its first run: without
 * this, every worker compiled the codec on its first caller's run (about 0.8 ms of its W1).
 */
export const PRIMITIVE_WARM_UP_REQUEST: ExecutionRequest = Object.freeze({
  ...WARM_UP_REQUEST,
  code: "1 + 1",
  tools: undefined,
  straightLine: true,
});
