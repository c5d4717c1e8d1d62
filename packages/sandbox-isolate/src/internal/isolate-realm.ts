import { performance } from "node:perf_hooks";
import { LruCache, MAX_CACHED_CODE_LENGTH } from "@suaveplan/sandbox-core/code-transformer";
import {
  GUEST_FILENAME,
  type GuestOutcome,
  type GuestRealm,
  type KernelBridge,
  MODULE_FILENAME_PREFIX,
  MODULE_WRAPPER_CLOSE,
  MODULE_WRAPPER_OPEN,
  type RealmStatus,
  type SourceModule,
} from "@suaveplan/sandbox-guest/realm";
import type { IsolateContext, IsolateReference } from "../isolate-factory/isolate-factory.js";
import { describeRejection, isTimeoutError, messageOf, syntaxRecord } from "./isolate-failure.js";
import type { IsolateSlot, PreparedKernel } from "./isolate-slot.js";

const MIB = 1024 * 1024;
/** How much earlier than asked isolated-vm's timeout may end a call by our clock, in ms. */
const TIMEOUT_SLACK_MS = 5;
/** How long past its own timeout an isolate call may take to come back before the isolate is disposed, in ms. */
const SETTLE_GRACE_MS = 250;
const OK: RealmStatus = Object.freeze({ ok: true });

/** Options of {@link createIsolateRealm}. */
export interface IsolateRealmOptions {
  /** The leased isolate; the realm hands it back through `onRelease`. */
  slot: IsolateSlot;
  /** The guest code, as prepared (`prepareGuestCode().source`). */
  code: string;
  /**
   * The code is a provably bounded pure expression with no source module
   * (`ExecutionRequest.straightLine`): evaluate it with `applySync` on this
   * thread, still under isolated-vm's timeout, instead of an async call whose
   * two thread hops cost more than the code.
   */
  straightLine?: boolean | undefined;
  maxTimers: number;
  maxTimerCreations: number;
  /** Called once the realm let go of the slot: `reusable` when nothing runs in its healthy isolate. */
  onRelease(slot: IsolateSlot, reusable: boolean): void;
}

/**
 * The guest realm on isolated-vm: a fresh context of a leased isolate with
 * the shared kernel installed. The bridge is a copy-only isolated-vm
 * `Callback`; every entry (boot, source modules, the code through the
 * kernel's `evaluate`, timers, replies) is one `Reference.apply` off the host
 * thread under isolated-vm's own timeout, after which isolated-vm runs the
 * isolate's microtasks. A call's rejection is the outcome: a timeout, the
 * memory limit (isolated-vm disposed the isolate), or the rejection nobody
 * handled, which isolated-vm 5 throws to the running call.
 */
export function createIsolateRealm(options: IsolateRealmOptions): (bridge: KernelBridge) => GuestRealm {
  return (bridge) => new IsolateRealm(options, bridge);
}

class IsolateRealm implements GuestRealm {
  private context: IsolateContext | undefined;
  private enterRef: IsolateReference | undefined;
  /** The isolate work under way, with the time its own timeout ends it. */
  private busy: { settled: Promise<void>; deadline: number } | undefined;
  private disposing = false;
  private released = false;
  private disposedHere = false;
  private heapBefore = 0;
  private cpuBefore: bigint | undefined;

  constructor(
    private readonly options: IsolateRealmOptions,
    private readonly bridge: KernelBridge,
  ) {}

  async boot(
    runConfigJson: string,
    contextText: string,
    modulesText: string,
    sourceModules: readonly SourceModule[],
    timeoutMs: number,
  ): Promise<RealmStatus> {
    const started = performance.now();
    let status = await this.track(this.setUp(), started);
    // Boot runs kernel code only (parse the run config, decode the host's data, define globals),
    // bounded by its input: on this thread, without the thread hop an async call costs (~80 µs).
    if (status.ok) status = this.callSync("boot", [runConfigJson, contextText, modulesText], timeoutMs);
    for (const module of sourceModules) {
      if (!status.ok) break;
      status = await this.defineModule(
        module,
        Math.max(1, Math.ceil(started + timeoutMs - performance.now())),
      );
    }
    return status;
  }

  main(timeoutMs: number): Promise<RealmStatus> | RealmStatus {
    try {
      // The kernel evaluates the code (so what it throws stays a guest value); compiling it
      // here first is how a syntax error gets its line and column, which eval does not report.
      // Whether code parses does not depend on the isolate: code seen to compile is not compiled again.
      if (COMPILES.get(this.options.code) === undefined) {
        this.options.slot.isolate
          .compileScriptSync(this.options.code, { filename: GUEST_FILENAME })
          .release();
        rememberCompiles(this.options.code);
      }
    } catch (error) {
      const record = syntaxRecord(error);
      return {
        ok: false,
        outcome: record === undefined ? this.broken(error) : { kind: "syntax", error: record },
      };
    }
    return this.options.straightLine === true
      ? this.callSync("evaluate", [this.options.code], timeoutMs)
      : this.call("evaluate", [this.options.code], timeoutMs);
  }

  enter(
    name: "fire" | "reply",
    args: readonly (string | number | boolean)[],
    timeoutMs: number,
  ): Promise<RealmStatus> {
    return this.call(name, args, timeoutMs);
  }

  cpuUsed(): number | undefined {
    const now = this.cpuTime();
    return now === undefined || this.cpuBefore === undefined ? undefined : Number(now - this.cpuBefore) / 1e6;
  }

  private cpuTime(): bigint | undefined {
    try {
      const time = this.options.slot.isolate.cpuTime;
      return typeof time === "bigint" ? time : undefined;
    } catch {
      return undefined; // a disposed isolate
    }
  }

  memoryUsed(): number | undefined {
    // Heap statistics wait for code running in the isolate: only ask an idle one.
    if (this.busy !== undefined || this.released || !this.options.slot.healthy) return undefined;
    return Math.max(0, this.heapUsed() - this.heapBefore);
  }

  dispose(): void {
    if (this.disposing) return;
    this.disposing = true;
    const busy = this.busy;
    if (busy === undefined) {
      this.letGo();
      return;
    }
    const left = busy.deadline - performance.now();
    if (left > SETTLE_GRACE_MS) {
      // Ended from outside (destroyed, cancelled) with time on the call's clock: stop it now.
      this.disposeIsolate();
      return;
    }
    // Its own timeout ends the call in a moment; wait for it and keep the warm isolate.
    const fallback = setTimeout(() => this.disposeIsolate(), Math.max(0, left) + SETTLE_GRACE_MS);
    void busy.settled.then(() => {
      clearTimeout(fallback);
      this.letGo();
    });
  }

  /** Take a fresh context with the kernel installed (no guest code yet), keep `enter`. */
  private async setUp(): Promise<RealmStatus> {
    const { slot, maxTimers, maxTimerCreations } = this.options;
    const limits = { maxTimers, maxTimerCreations };
    slot.kernelLimits = limits;
    let prepared: PreparedKernel;
    try {
      prepared = await slot.takeKernel(limits);
    } catch (error) {
      return { ok: false, outcome: this.broken(error) };
    }
    this.context = prepared.context;
    this.enterRef = prepared.enterRef;
    prepared.bind(this.bridge);
    if (this.disposing) return { ok: false, outcome: { kind: "fault", message: "the realm was released" } };
    this.heapBefore = this.heapUsed();
    this.cpuBefore = this.cpuTime();
    return OK;
  }

  private async defineModule(module: SourceModule, timeoutMs: number): Promise<RealmStatus> {
    const { isolate } = this.options.slot;
    let factory: IsolateReference;
    try {
      const script = isolate.compileScriptSync(
        `${MODULE_WRAPPER_OPEN}${module.source}${MODULE_WRAPPER_CLOSE}`,
        {
          filename: `${MODULE_FILENAME_PREFIX}${module.name}`,
        },
      );
      // Evaluating the function expression runs no guest code.
      factory = script.runSync(this.context as IsolateContext, { reference: true });
      script.release();
    } catch (error) {
      if (!this.options.slot.healthy) return { ok: false, outcome: this.broken(error) };
      const reason = syntaxRecord(error)?.message ?? "invalid source";
      return {
        ok: false,
        outcome: { kind: "fault", message: `module ${module.name} could not be compiled: ${reason}` },
      };
    }
    try {
      return await this.call("defineModule", [module.name, factory.derefInto()], timeoutMs);
    } finally {
      releaseQuietly(factory);
    }
  }

  /** Run one kernel entry in the isolate within `timeoutMs`; a rejection is the outcome. */
  private async call(name: string, args: readonly unknown[], timeoutMs: number): Promise<RealmStatus> {
    const enter = this.enterRef;
    if (enter === undefined || this.disposing) {
      return { ok: false, outcome: { kind: "fault", message: "the realm was released" } };
    }
    const started = performance.now();
    const call = enter.apply(undefined, [name, ...args], { timeout: timeoutMs });
    try {
      return this.returned(name, await this.track(call, started + timeoutMs));
    } catch (error) {
      return { ok: false, outcome: this.rejected(error, performance.now() - started, timeoutMs) };
    }
  }

  /**
   * Run one kernel entry on this thread (isolated-vm's `applySync`, still under its timeout): only
   * an entry bounded by its input (boot; a straight-line evaluation), and only while nothing else
   * runs in the leased isolate, as during boot.
   */
  private callSync(name: string, args: readonly unknown[], timeoutMs: number): RealmStatus {
    const enter = this.enterRef;
    if (enter === undefined || this.disposing) {
      return { ok: false, outcome: { kind: "fault", message: "the realm was released" } };
    }
    const started = performance.now();
    try {
      return this.returned(name, enter.applySync(undefined, [name, ...args], { timeout: timeoutMs }));
    } catch (error) {
      return { ok: false, outcome: this.rejected(error, performance.now() - started, timeoutMs) };
    }
  }

  /** What an entry returned (see `RealmEnter`): an outcome it reported on the way goes to the driver now. */
  private returned(name: string, value: unknown): RealmStatus {
    if (value === true) return OK;
    if (typeof value === "string") {
      const colon = value.indexOf(":");
      this.bridge("done", value.slice(0, colon), value.slice(colon + 1));
      return OK;
    }
    return { ok: false, outcome: { kind: "fault", message: `the kernel's ${name} entry failed` } };
  }

  /** Mark `work` as running in the isolate until it settles (see {@link dispose}). */
  private track<T>(work: Promise<T>, deadline: number): Promise<T> {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    const busy = { settled, deadline };
    this.busy = busy;
    void settled.then(() => {
      if (this.busy === busy) this.busy = undefined;
    });
    return work;
  }

  /** What a rejected entry call means. */
  private rejected(error: unknown, spentMs: number, timeoutMs: number): GuestOutcome {
    if (this.disposedHere || !this.options.slot.healthy) return this.broken(error);
    if (isTimeoutError(error) && spentMs >= timeoutMs - TIMEOUT_SLACK_MS)
      return { kind: "timeout", timeoutMs: -1 };
    // The entries catch what guest code throws: what reaches us is a rejection nobody handled.
    return { kind: "error", error: describeRejection(error) };
  }

  /** An isolate that failed outside guest code: its memory limit, or a fault. */
  private broken(error: unknown): GuestOutcome {
    const { slot } = this.options;
    if (!slot.healthy && !this.disposedHere) return { kind: "memory", limitBytes: slot.memoryLimitMiB * MIB };
    return { kind: "fault", message: `The isolate failed: ${messageOf(error)}` };
  }

  private heapUsed(): number {
    const stats = this.options.slot.isolate.getHeapStatisticsSync();
    return stats.used_heap_size + stats.externally_allocated_size;
  }

  private disposeIsolate(): void {
    this.disposedHere = true;
    this.options.slot.dispose();
    this.letGo();
  }

  /** Release the context and hand the slot back, once. */
  private letGo(): void {
    if (this.released) return;
    this.released = true;
    const { slot } = this.options;
    if (slot.healthy) {
      if (this.enterRef !== undefined) releaseQuietly(this.enterRef);
      if (this.context !== undefined) releaseQuietly(this.context);
    }
    this.enterRef = undefined;
    this.context = undefined;
    this.options.onRelease(slot, slot.healthy && !this.disposedHere);
  }
}

/** Recently seen code that compiles (whether code parses does not depend on the isolate). */
const COMPILES = new LruCache<string, true>(128);

function rememberCompiles(code: string): void {
  if (code.length <= MAX_CACHED_CODE_LENGTH) COMPILES.set(code, true);
}

function releaseQuietly(handle: { release(): void }): void {
  try {
    handle.release();
  } catch {
    // The isolate is gone; so is the handle.
  }
}
