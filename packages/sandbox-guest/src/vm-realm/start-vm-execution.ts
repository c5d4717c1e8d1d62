import type { Script } from "node:vm";
import type { LogEntry } from "@suaveplan/sandbox-core/types";
import { GuestDriver } from "../driver/guest-driver.js";
import type { GuestCall } from "../protocol/protocol.js";
import { driverPlanOf, type ExecutionRequest } from "../request/execution-request.js";
import { createVmRealm, type PreparedVmRealm } from "./vm-realm.js";

/** Hooks of {@link startVmExecution}. */
export interface VmExecutionHooks {
  /** Each console line as the guest writes it. */
  onLog?: ((entry: LogEntry) => void) | undefined;
  /** Each guest→host call; answer with `driver.reply`. */
  onCall?: ((call: GuestCall) => string | undefined) | undefined;
  /** A cached compile of `request.code`. */
  script?: Script | undefined;
  /** False only for code proven to be a bounded pure expression. */
  watchdog?: boolean;
  /** False where the host stops a realm that does not report by the deadline (see `VmRealmOptions.callbackWatchdog`). */
  callbackWatchdog?: boolean;
  /** A realm prepared off the caller's path (`prepareVmRealm`); single-use. */
  prepared?: PreparedVmRealm | undefined;
  /** Cap the realm's Wasm memory at this many bytes (see `capWasmMemory`); uncapped when absent. */
  maxWasmBytes?: number | undefined;
  /**
   * Let a straight-line `request` settle without the macrotask hop (see
   * `VmRealmOptions.settleAtOnce`; other code always waits it); default false.
   * Pass it only where no other run waits on this thread's macrotasks.
   */
  settleAtOnce?: boolean;
  /** Empty the context after the result is handed over (see `VmRealmOptions.teardownLater`); default false. */
  teardownLater?: boolean;
  /** Let SIGINT stop the guest's code on this thread; the run ends `cancelled` (see `VmRealmOptions.breakOnSigint`). */
  breakOnSigint?: boolean;
}

/**
 * Run one {@link ExecutionRequest} in a fresh `node:vm` realm under the shared
 * driver — the whole realm side of the vm engine, and of the worker and spawn
 * engines inside their thread or process.
 */
export function startVmExecution(request: ExecutionRequest, hooks: VmExecutionHooks = {}): GuestDriver {
  return new GuestDriver(
    driverPlanOf(request, { onLog: hooks.onLog, onCall: hooks.onCall }),
    createVmRealm({
      code: request.code,
      script: hooks.script,
      watchdog: hooks.watchdog ?? true,
      callbackWatchdog: hooks.callbackWatchdog ?? true,
      contextValues: request.contextValues,
      maxResultBytes: request.maxResultBytes,
      maxTimers: request.maxTimers,
      maxTimerCreations: request.maxTimerCreations,
      maxWasmBytes: hooks.maxWasmBytes,
      prepared: hooks.prepared,
      settleAtOnce: hooks.settleAtOnce === true && request.straightLine === true,
      teardownLater: hooks.teardownLater === true,
      breakOnSigint: hooks.breakOnSigint === true,
      noBackingStores:
        request.straightLine === true &&
        request.contextText === "" &&
        request.modulesText === "" /* contextValues are primitives: no buffer */,
    }),
  );
}
