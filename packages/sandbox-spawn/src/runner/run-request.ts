import { MAX_TIMER_MS } from "@suaveplan/sandbox-core/types";
import {
  DEFAULT_MAX_TIMERS,
  type ExecutionRequest,
  type PreparedVmRealm,
  prepareVmRealm,
  startVmExecution,
  TIMER_CREATIONS_PER_PENDING,
} from "@suaveplan/sandbox-guest";
import type { FrameSink } from "./fd-sink.js";
import { SELF_DEADLINE_GRACE_MS } from "./protocol.js";

/**
 * Run one request on the shared guest runtime (a fresh `node:vm` realm under
 * the shared driver) and write its frames to `sink`: `start`, a `log` frame
 * per console line as the guest writes it, then `done`. Resolves once `done`
 * was written.
 *
 * The host's SIGKILL at `timeoutMs` is the timeout; the runner bounds the run
 * {@link SELF_DEADLINE_GRACE_MS} later, for a child whose host died (its
 * `done` frame still names the request's `timeoutMs`).
 */
export async function runRequest(
  request: ExecutionRequest,
  sink: FrameSink,
  prepared?: PreparedVmRealm,
): Promise<void> {
  sink.write({ type: "start" });
  const driver = startVmExecution(
    { ...request, timeoutMs: Math.min(request.timeoutMs + SELF_DEADLINE_GRACE_MS, MAX_TIMER_MS) },
    { onLog: (entry) => sink.write({ type: "log", level: entry.level, message: entry.message }), prepared },
  );
  const { outcome, memoryUsed } = await driver.result;
  sink.write({
    type: "done",
    outcome: outcome.kind === "timeout" ? { kind: "timeout", timeoutMs: request.timeoutMs } : outcome,
    memoryUsed,
  });
}

/**
 * Run one throwaway request through every path a real one takes (kernel
 * compile, codec decode and encode, console, timers, a promise, a source
 * module, a filtered stack, frames), so a pre-started child answers its
 * request with warm code instead of first-call costs. Nothing is written anywhere.
 */
export async function warmUp(): Promise<void> {
  const discard: FrameSink = { write: (frame) => void Buffer.from(`${JSON.stringify(frame)}\n`, "utf8") };
  await runRequest(
    {
      code: "console.log('warm', { warm }, [warmModule.v, warmSource.w]); let stack; try { null.x; } catch (e) { stack = e.stack; } new Promise((done) => setTimeout(() => done([1, 'two', { three: null }, new Date(0), stack]), 0))",
      contextText: '["o",[["warm",true]]]',
      modulesText: JSON.stringify([["warmModule", '["o",[["v",1]]]']]),
      sourceModules: [{ name: "warmSource", source: "module.exports.w = 2;" }],
      timeoutMs: 5_000,
      maxOutputSize: 1024,
      maxLogLines: 100,
      maxTimers: 10,
      maxTimerCreations: 100,
      maxResultBytes: 1024 * 1024,
      maxCallBytes: 1024,
    },
    discard,
  );
}

/** The request's fresh context with the kernel installed, made while the child waits (single-use). */
export function prepareRealm(): PreparedVmRealm {
  return prepareVmRealm({
    maxTimers: DEFAULT_MAX_TIMERS,
    maxTimerCreations: DEFAULT_MAX_TIMERS * TIMER_CREATIONS_PER_PENDING,
  });
}
