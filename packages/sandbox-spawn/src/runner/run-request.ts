import { MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import {
  type CallReply,
  DEFAULT_MAX_TIMERS,
  type ExecutionRequest,
  type PreparedVmRealm,
  prepareVmRealm,
  startVmExecution,
  TIMER_CREATIONS_PER_PENDING,
} from "@suaveplan/sandbox-guest/realm";
import { cpuLimitSeconds } from "../internal/node-args.js";
import type { FrameSink } from "./fd-sink.js";
import { SELF_DEADLINE_GRACE_MS } from "./protocol.js";

/** Options of {@link runRequest}. */
export interface RunRequestOptions {
  /** A realm made while the child waited (`prepareRealm`); single-use. */
  prepared?: PreparedVmRealm | undefined;
  /**
   * The OS CPU-time limit the child runs under, in seconds (the host started
   * it so). When it covers the request (`cpuLimitSeconds(timeoutMs)` at most
   * this), guest code re-entered after a timer or a tool reply runs without
   * node's watchdog thread per entry, as on the worker engine: the host's
   * SIGKILL stops it at the timeout, the CPU-time limit should the host be
   * gone. The first evaluation keeps its watchdog either way.
   */
  cpuLimitSeconds?: number | undefined;
  /**
   * Where the host's replies to the `call` frames come from: called once, when
   * the request offers `tools`, with the function each `CallReply` goes to (in
   * the child: the stdin lines after the request). A reply for an unknown call
   * or after the run ended is dropped by the driver.
   */
  replies?: ((deliver: (reply: CallReply) => void) => void) | undefined;
}

/**
 * Run one request on the shared guest runtime (a fresh `node:vm` realm under
 * the shared driver) and write its frames to `sink`: `start`, a `log` frame
 * per console line as the guest writes it, a `call` frame per guest→host call
 * (only when the request offers `tools`; otherwise the driver refuses calls),
 * then `done` with the outcome and the usage (heap growth, CPU time, tool
 * calls and their bytes). Resolves once `done` was written.
 *
 * The host's SIGKILL at `timeoutMs` is the timeout; the runner bounds the run
 * {@link SELF_DEADLINE_GRACE_MS} later, for a child whose host died (its
 * `done` frame still names the request's `timeoutMs`); guest code that spins
 * after a re-entry without the watchdog is ended by the CPU-time limit.
 */
export async function runRequest(
  request: ExecutionRequest,
  sink: FrameSink,
  options: RunRequestOptions = {},
): Promise<void> {
  const residentAtStart = process.memoryUsage.rss();
  const peakAtStart = peakResidentBytes();
  sink.write({ type: "start" });
  const offersTools = request.tools !== undefined;
  const driver = startVmExecution(
    { ...request, timeoutMs: Math.min(request.timeoutMs + SELF_DEADLINE_GRACE_MS, MAX_TIMER_MS) },
    {
      onLog: (entry) => sink.write({ type: "log", level: entry.level, message: entry.message }),
      // The host answers on stdin; the frame goes out before the guest continues.
      onCall: offersTools
        ? (call) => {
            sink.write({ type: "call", call: { id: call.id, name: call.name, text: call.text } });
            return undefined;
          }
        : undefined,
      prepared: options.prepared,
      // The host proved it a bounded pure expression (`straightLine`): no watchdog thread for it.
      watchdog: request.straightLine !== true,
      // The child's one run: a straight-line one need not wait a macrotask to settle.
      settleAtOnce: true,
      callbackWatchdog:
        options.cpuLimitSeconds === undefined || cpuLimitSeconds(request.timeoutMs) > options.cpuLimitSeconds,
    },
  );
  if (offersTools) options.replies?.((reply) => driver.reply(reply));
  const { outcome, memoryUsed, cpuMs, toolCalls, toolBytes } = await driver.result;
  const peak = peakResidentBytes();
  sink.write({
    type: "done",
    outcome: outcome.kind === "timeout" ? { kind: "timeout", timeoutMs: request.timeoutMs } : outcome,
    memoryUsed,
    cpuMs,
    toolCalls,
    toolBytes,
    peakBytes: peak > peakAtStart ? peak - residentAtStart : 0,
  });
}

/** This process's peak resident memory so far, in bytes (`ru_maxrss`, which node reports in KiB). */
function peakResidentBytes(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/**
 * Run one throwaway request through every path a real one takes (kernel
 * compile, codec decode and encode, console, timers, a promise, a source
 * module, a filtered stack, a tool call and its reply, frames), so a
 * pre-started child answers its request with warm code instead of first-call
 * costs; then a straight-line one with a primitive value, which the host
 * side's codec encodes (nothing else compiles that codec before a child's
 * first request). Nothing is written anywhere.
 */
export async function warmUp(): Promise<void> {
  let deliver: ((reply: CallReply) => void) | undefined;
  const discard: FrameSink = {
    write: (frame) => {
      void Buffer.from(`${JSON.stringify(frame)}\n`, "utf8");
      // Echo the call's input, as a host would answer it: later, from outside the guest's turn.
      if (frame.type === "call") {
        const { id, text } = frame.call;
        setImmediate(() => deliver?.({ id, ok: true, text }));
      }
    },
  };
  await runRequest(
    {
      code: "console.log('warm', { warm }, [warmModule.v, warmSource.w]); let stack; try { null.x; } catch (e) { stack = e.stack; } new Promise((done) => setTimeout(() => done(tools.echo([1, 'two', { three: null }, new Date(0), stack])), 0))",
      contextText: '["o",[["warm",true]]]',
      modulesText: JSON.stringify([["warmModule", '["o",[["v",1]]]']]),
      sourceModules: [{ name: "warmSource", source: "module.exports.w = 2;" }],
      timeoutMs: 5_000,
      maxOutputSize: 1024,
      maxLogLines: 100,
      maxTimers: 10,
      maxTimerCreations: 100,
      maxResultBytes: 1024 * 1024,
      maxCallBytes: 1024 * 1024,
      tools: ["echo"],
    },
    discard,
    {
      replies: (next) => {
        deliver = next;
      },
    },
  );
  await runRequest({ ...PRIMITIVE_WARM_UP, straightLine: true }, discard);
}

/** The straight-line warm-up: a caller's `2 + 3` takes the same path. */
const PRIMITIVE_WARM_UP: ExecutionRequest = {
  code: "1 + 1",
  contextText: "",
  modulesText: "",
  sourceModules: [],
  timeoutMs: 5_000,
  maxOutputSize: 1024,
  maxLogLines: 100,
  maxTimers: 10,
  maxTimerCreations: 100,
  maxResultBytes: 1024,
  maxCallBytes: 1024,
};

/** The request's fresh context with the kernel installed, made while the child waits (single-use). */
export function prepareRealm(): PreparedVmRealm {
  return prepareVmRealm({
    maxTimers: DEFAULT_MAX_TIMERS,
    maxTimerCreations: DEFAULT_MAX_TIMERS * TIMER_CREATIONS_PER_PENDING,
  });
}
