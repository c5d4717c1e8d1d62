import { performance } from "node:perf_hooks";
import {
  type ErrorRecord,
  GUEST_FILENAME,
  type GuestOutcome,
  type GuestRealm,
  hostEntropy,
  type KernelBridge,
  MODULE_FILENAME_PREFIX,
  MODULE_WRAPPER_CLOSE,
  MODULE_WRAPPER_OPEN,
  type RealmStatus,
  type SourceModule,
  v8SyntaxRecord,
} from "@suaveplan/sandbox-guest";
import type { QuickJSHandle, VmCallResult } from "quickjs-emscripten-core";
import type { QuickJsSlot } from "./quickjs-slot.js";
import { isSigintInterrupt, runBreakable } from "./run-breakable.js";

const OK: RealmStatus = Object.freeze({ ok: true });
/** `sandbox.js:3:7` in QuickJS's own stack text (a compile error has no other position). */
const POSITION = new RegExp(`${GUEST_FILENAME.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:(\\d+):(\\d+)`);

/** Options of {@link createQuickJsRealm}. */
export interface QuickJsRealmOptions {
  /** The leased slot; handed back through `onRelease`. */
  slot: QuickJsSlot;
  /** The guest code, as prepared (`prepareGuestCode().source`). */
  code: string;
  /** Let SIGINT stop the guest's code on this thread; the run ends `cancelled` (see `runBreakable`). */
  breakOnSigint?: boolean;
  /** Called once when the realm lets go of the slot. */
  onRelease(slot: QuickJsSlot): void;
}

/**
 * The guest realm on QuickJS: the leased slot's memory put back to the
 * installed kernel's image and renewed for this run (entropy, clock), and
 * every entry a synchronous call under the slot's interrupt deadline,
 * followed by the microtasks (QuickJS's pending jobs) it queued.
 */
export function createQuickJsRealm(options: QuickJsRealmOptions): (bridge: KernelBridge) => GuestRealm {
  return (bridge) => new QuickJsRealm(options, bridge);
}

class QuickJsRealm implements GuestRealm {
  private entries: QuickJSHandle | undefined;
  private released = false;
  private cpuMs = 0;

  constructor(
    private readonly options: QuickJsRealmOptions,
    private readonly bridge: KernelBridge,
  ) {}

  boot(
    runConfigJson: string,
    contextText: string,
    modulesText: string,
    sourceModules: readonly SourceModule[],
    timeoutMs: number,
  ): RealmStatus {
    const { slot } = this.options;
    const deadline = performance.now() + timeoutMs;
    slot.restore(this.bridge);
    this.entries = slot.entries;
    let status = this.entry("renew", [hostEntropy()], deadline);
    if (status.ok) status = this.entry("boot", [runConfigJson, contextText, modulesText], deadline);
    for (const module of sourceModules) {
      if (!status.ok) break;
      status = this.defineModule(module, deadline);
    }
    return status;
  }

  main(timeoutMs: number): RealmStatus {
    const { slot, code } = this.options;
    const { context } = slot;
    const deadline = performance.now() + timeoutMs;
    // Compiled first, alone: how a syntax error is told from a SyntaxError the code throws.
    const compiled = context.evalCode(code, GUEST_FILENAME, { type: "global", compileOnly: true });
    if (compiled.error !== undefined) {
      if (slot.exceeded) return { ok: false, outcome: this.memory() };
      // Worded as V8 words it (compiled there, never run), so a syntax error reads the same on every
      // engine; QuickJS's own words where V8 accepts the code.
      const record = v8SyntaxRecord(code) ?? syntaxRecord(context.dump(compiled.error));
      return { ok: false, outcome: { kind: "syntax", error: record } };
    }
    return this.run(deadline, () => {
      const evaluated = context.evalCode(code, GUEST_FILENAME, { type: "global" });
      // An interrupt or the memory limit stopped it: `run` reports that, not what was thrown.
      if (slot.interrupted || slot.exceeded) return evaluated;
      return evaluated.error !== undefined
        ? this.call("fail", [evaluated.error])
        : this.call("settle", [evaluated.value]);
    });
  }

  enter(
    name: "fire" | "reply",
    args: readonly (string | number | boolean)[],
    timeoutMs: number,
  ): RealmStatus {
    return this.entry(name, args, performance.now() + timeoutMs);
  }

  memoryUsed(): number | undefined {
    return this.released ? undefined : this.options.slot.heapGrowth();
  }

  cpuUsed(): number | undefined {
    return this.cpuMs;
  }

  dispose(): void {
    if (this.released) return;
    this.released = true;
    this.entries = undefined;
    this.options.slot.release();
    this.options.onRelease(this.options.slot);
  }

  private defineModule(module: SourceModule, deadline: number): RealmStatus {
    const { context } = this.options.slot;
    const factory = context.evalCode(
      `${MODULE_WRAPPER_OPEN}${module.source}${MODULE_WRAPPER_CLOSE}`,
      `${MODULE_FILENAME_PREFIX}${module.name}`,
      { type: "global" },
    );
    if (factory.error !== undefined) {
      const reason = syntaxRecord(context.dump(factory.error)).message;
      return {
        ok: false,
        outcome: { kind: "fault", message: `module ${module.name} could not be compiled: ${reason}` },
      };
    }
    return this.run(deadline, () => this.call("defineModule", [module.name, factory.value]));
  }

  /** Call a kernel entry with primitive arguments, then its microtasks. */
  private entry(name: string, args: readonly (string | number | boolean)[], deadline: number): RealmStatus {
    return this.run(deadline, () => this.call(name, args));
  }

  private call(
    name: string,
    args: readonly (string | number | boolean | QuickJSHandle)[],
  ): VmCallResult<QuickJSHandle> {
    const { context } = this.options.slot;
    const entries = this.entries;
    if (entries === undefined) return { error: context.newString("the kernel is not installed") };
    const fn = context.getProp(entries, name);
    const handles = args.map((arg) => {
      if (typeof arg === "string") return context.newString(arg);
      if (typeof arg === "number") return context.newNumber(arg);
      if (arg === true) return context.true;
      if (arg === false) return context.false;
      return arg;
    });
    return context.callFunction(fn, context.undefined, ...handles);
  }

  /**
   * Run `work` (guest code or a kernel entry) and then the pending jobs it
   * queued, all under `deadline`; what stopped it is the status. Handles made
   * here are never freed one by one: the next run's restore wipes them.
   */
  private run(deadline: number, work: () => VmCallResult<QuickJSHandle>): RealmStatus {
    const { slot } = this.options;
    if (this.released) return { ok: false, outcome: { kind: "fault", message: "the realm was released" } };
    slot.deadline = deadline;
    const started = performance.now();
    const call = <T>(fn: () => T): T => (this.options.breakOnSigint === true ? runBreakable(fn) : fn());
    try {
      let result = call(work);
      if (result.error === undefined) {
        const jobs = call(() => slot.runtime.executePendingJobs(-1));
        if (jobs.error !== undefined) result = { error: jobs.error };
      }
      if (slot.exceeded) return { ok: false, outcome: this.memory() };
      if (slot.interrupted) return { ok: false, outcome: { kind: "timeout", timeoutMs: -1 } };
      if (result.error !== undefined) return { ok: false, outcome: this.failed(result.error) };
      return OK;
    } catch (error) {
      // A trap inside the module (out of bounds, unreachable), or a SIGINT that stopped it part-way:
      // the slot is not run again.
      slot.healthy = false;
      if (isSigintInterrupt(error)) return { ok: false, outcome: { kind: "cancelled" } };
      if (slot.exceeded) return { ok: false, outcome: this.memory() };
      return { ok: false, outcome: { kind: "fault", message: `QuickJS failed: ${messageOf(error)}` } };
    } finally {
      slot.deadline = Number.POSITIVE_INFINITY;
      this.cpuMs += performance.now() - started;
    }
  }

  /** What an entry that threw past the kernel means: the kernel catches what guest code throws. */
  private failed(error: QuickJSHandle): GuestOutcome {
    const { context } = this.options.slot;
    const described = context.dump(error) as unknown;
    return { kind: "fault", message: `the kernel failed in QuickJS: ${JSON.stringify(described)}` };
  }

  private memory(): GuestOutcome {
    return { kind: "memory", limitBytes: this.options.slot.limits.memoryLimit };
  }
}

/** The record of a compile error, from QuickJS's dump of the SyntaxError. */
function syntaxRecord(dumped: unknown): ErrorRecord {
  const error = (typeof dumped === "object" && dumped !== null ? dumped : {}) as {
    message?: unknown;
    stack?: unknown;
  };
  const message = typeof error.message === "string" ? error.message : String(dumped);
  const record: ErrorRecord = { name: "SyntaxError", message, stack: "" };
  const found = typeof error.stack === "string" ? POSITION.exec(error.stack) : null;
  if (found !== null) {
    record.line = Number(found[1]);
    record.column = Number(found[2]);
  }
  return record;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
