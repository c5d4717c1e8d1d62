/**
 * The isolate helper process: a transport and nothing more. Started by
 * `IsolateEngine` in helper mode as `node --no-node-snapshot
 * dist/isolate-helper.js` with an IPC channel, it runs every execution the
 * engine sends with the same code as in-process mode (`startIsolateRun`: the
 * isolate pool, the isolated-vm realm and the shared driver) and streams each
 * execution's driver events back, tagged with its id.
 *
 * Its lifeline is the IPC channel: when the engine disconnects (the
 * application exited, was killed or destroyed the engine) it ends at once,
 * even while guest code runs. It ignores SIGINT: Ctrl-C in a terminal signals
 * the whole foreground process group, this helper included, and the
 * application decides what a Ctrl-C means (it may cancel runs and exit, and
 * this process then follows its lifeline).
 */
import { SandboxError } from "@suaveplan/sandbox-core/error-codes";
import {
  type DriverEvent,
  type GuestDriver,
  readExecutionRequest,
  withoutCode,
} from "@suaveplan/sandbox-guest/realm";
import type { FromHelper, ToHelper } from "../internal/helper-protocol.js";
import { IsolatePool } from "../internal/isolate-pool.js";
import { startIsolateRun } from "../internal/isolate-run.js";
import { createIsolatedVmFactory } from "../isolate-factory/isolated-vm-factory.js";

if (typeof process.send !== "function") {
  throw new Error("@suaveplan/sandbox-isolate: the isolate helper must be started by IsolateEngine");
}

const factory = createIsolatedVmFactory();
let pool: IsolatePool | undefined;
const running = new Map<number, GuestDriver>();

function post(message: FromHelper): void {
  try {
    process.send?.(message);
  } catch {
    // The engine is gone: `disconnect` ends this process.
  }
}

/**
 * End this process now. Not `process.exit()`: with guest code running in an
 * isolate, an exit waits for isolated-vm's thread until the run's timeout ends
 * the code (a helper at 100 % CPU outliving its application), and an exit
 * beside isolated-vm's threads was also seen to hang or crash. The helper
 * holds nothing to flush (every result went over the channel, now closed).
 */
function endNow(): void {
  process.kill(process.pid, "SIGKILL");
}

process.on("disconnect", endNow);
process.on("SIGINT", () => undefined);
// The application may have gone before this listened.
if (!process.connected) endNow();
process.on("message", (message: ToHelper) => {
  switch (message?.type) {
    case "init":
      pool ??= new IsolatePool(factory, message.maxIdleIsolates);
      return;
    case "run":
      run(message.id, message);
      return;
    case "reply":
      running.get(message.id)?.reply(message.reply);
      return;
    case "abort":
      running.get(message.id)?.abort({ kind: "cancelled" });
      return;
    case "reset":
      pool?.clearIdle();
      return;
  }
});
post({ type: "ready" });

function run(id: number, message: Extract<ToHelper, { type: "run" }>): void {
  pool ??= new IsolatePool(factory, 1);
  const send = (event: DriverEvent) => post({ type: "event", id, event });
  const { memoryLimitMiB } = message;
  let started: ReturnType<typeof startIsolateRun>;
  try {
    const request = readExecutionRequest(message.request);
    started = startIsolateRun(pool, request, memoryLimitMiB, {
      onLog: (entry) => send({ type: "log", level: entry.level, message: entry.message }),
      // Only a run with host calls has a `tools` global; without it the driver refuses every call.
      onCall:
        request.tools === undefined
          ? undefined
          : (call) => {
              send({ type: "call", call: { id: call.id, name: call.name, text: call.text } });
              return undefined;
            },
    });
  } catch (error) {
    post({
      type: "refused",
      id,
      code: error instanceof SandboxError ? error.code : "SANDBOX_ENGINE_FAILED",
      message: withoutCode(error),
    });
    return;
  }
  running.set(id, started.driver);
  void started.ended.then(({ outcome, memoryUsed, cpuMs, toolCalls, toolBytes }) => {
    running.delete(id);
    send({ type: "done", outcome, memoryUsed, cpuMs, toolCalls, toolBytes });
  });
}
