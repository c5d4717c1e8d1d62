import type { LogEntry } from "@suaveplan/sandbox-core/types";
import {
  type DriverResult,
  driverPlanOf,
  type ExecutionRequest,
  type GuestCall,
  GuestDriver,
  refusedAllocation,
} from "@suaveplan/sandbox-guest/realm";
import type { IsolatePool } from "./isolate-pool.js";
import { createIsolateRealm } from "./isolate-realm.js";

const MIB = 1024 * 1024;

/** Hooks of {@link startIsolateRun}. */
export interface IsolateRunHooks {
  /** Each console line as the guest writes it. */
  onLog?: ((entry: LogEntry) => void) | undefined;
  /** Each guest→host call; answer with `driver.reply`. Without it every call is refused. */
  onCall?: ((call: GuestCall) => string | undefined) | undefined;
}

/** One execution on a leased isolate. */
export interface IsolateRun {
  readonly driver: GuestDriver;
  /** The driver's result, once the isolate is back in the pool (or disposed); never rejects. */
  readonly ended: Promise<DriverResult>;
}

/**
 * Run one {@link ExecutionRequest} on an isolate of `pool` under the shared
 * driver — the whole realm side of the isolate engine, in the application
 * (in-process mode) or in the helper process (helper mode).
 *
 * @throws what `pool.acquire` throws (isolated-vm unusable).
 * @internal
 */
export function startIsolateRun(
  pool: IsolatePool,
  request: ExecutionRequest,
  memoryLimitMiB: number,
  hooks: IsolateRunHooks,
): IsolateRun {
  const slot = pool.acquire(memoryLimitMiB);
  let released!: () => void;
  const slotBack = new Promise<void>((resolve) => {
    released = resolve;
  });
  const driver = new GuestDriver(
    // The isolate enforces whole MiB; a result may cost the host as much.
    { ...driverPlanOf(request, hooks), maxResultBytes: slot.memoryLimitMiB * MIB },
    createIsolateRealm({
      slot,
      code: request.code,
      straightLine: request.straightLine,
      maxTimers: request.maxTimers,
      maxTimerCreations: request.maxTimerCreations,
      onRelease: (back, reusable) => {
        pool.release(back, reusable);
        released();
      },
    }),
  );
  // A call the deadline overtook comes back in a moment: wait, so the next execution finds the warm isolate.
  const ended = driver.result.then(async (result) => {
    await slotBack;
    return refusedAllocation(result.outcome)
      ? { ...result, outcome: { kind: "memory" as const, limitBytes: slot.memoryLimitMiB * MIB } }
      : result;
  });
  return { driver, ended };
}
