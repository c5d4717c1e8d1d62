import { randomBytes } from "node:crypto";
import { buildKernelSource, type KernelBridge, kernelConfig } from "@suaveplan/sandbox-guest";
import type {
  IsolateContext,
  IsolateFactory,
  IsolateHandle,
  IsolateReference,
  IsolateScript,
} from "../isolate-factory/isolate-factory.js";
import { realmSource } from "./realm-entry.js";

/**
 * The kernel's script-scope binding: a per-process random name, so guest
 * code cannot guess it and reflection does not find it (it is not a property
 * of the global object).
 */
const BINDING = `__suaveplan_kernel_${randomBytes(8).toString("hex")}`;
let kernelSource: string | undefined;
/**
 * V8's code cache of the kernel, made by the first isolate that compiles it
 * and given to every later one: a new isolate then neither parses the kernel
 * nor compiles its parts on their first call. Only ever for this process's
 * own kernel text — guest code is never compiled from a cache.
 */
let kernelCache: unknown;

function compileKernel(isolate: IsolateHandle, source: string): IsolateScript {
  const filename = "suaveplan:kernel";
  if (kernelCache !== undefined) {
    const script = isolate.compileScriptSync(source, { filename, cachedData: kernelCache });
    if (script.cachedDataRejected !== true) return script;
    kernelCache = undefined;
    script.release();
  }
  const script = isolate.compileScriptSync(source, { filename, produceCachedData: true });
  kernelCache = script.cachedData;
  return script;
}

/**
 * One isolate plus the two scripts every context starts with, compiled once:
 * the realm script (hardening, the entry trampoline) and the shared kernel.
 * A slot runs one execution at a time, each in a fresh context, and is
 * reused while it stays healthy.
 *
 * While a slot sits idle it prepares the next fresh context off the host
 * thread (a "spare"), so an execution that follows a pause skips the biggest
 * fixed cost. The spare is scheduled with `setImmediate`, so back-to-back
 * callers (who call again before the event loop turns) cancel it and create
 * their context synchronously instead of waiting behind it. A spare never
 * runs any code before it is handed to exactly one execution.
 *
 * @internal
 */
/** Timer limits a kernel is installed with; a prepared kernel serves only an execution with the same. */
export interface KernelLimits {
  readonly maxTimers: number;
  readonly maxTimerCreations: number;
}

/** A fresh context with the kernel already installed, made while the slot was idle; single-use. */
export interface PreparedKernel {
  readonly context: IsolateContext;
  /** The kernel's `enter` function. */
  readonly enterRef: IsolateReference;
  readonly limits: KernelLimits;
  /** Point the kernel's bridge at the execution that takes this kernel. */
  bind(bridge: KernelBridge): void;
}

export class IsolateSlot {
  private spare: IsolateContext | undefined;
  private spareKernel: PreparedKernel | undefined;
  /** The limits of the last execution: what the next spare kernel is installed with. */
  kernelLimits: KernelLimits | undefined;
  private sparePending: Promise<void> | undefined;
  private spareTimer: NodeJS.Immediate | undefined;

  private constructor(
    readonly isolate: IsolateHandle,
    readonly realm: IsolateScript,
    readonly kernel: IsolateScript,
    /** Heap limit, in MiB. */
    readonly memoryLimitMiB: number,
    private readonly factory: IsolateFactory,
  ) {}

  /** Create the isolate and compile its scripts once. */
  static create(factory: IsolateFactory, memoryLimitMiB: number): IsolateSlot {
    const isolate = factory.createIsolate({ memoryLimit: memoryLimitMiB });
    try {
      kernelSource ??= buildKernelSource(BINDING);
      const realm = isolate.compileScriptSync(realmSource(memoryLimitMiB), { filename: "suaveplan:realm" });
      const kernel = compileKernel(isolate, kernelSource);
      return new IsolateSlot(isolate, realm, kernel, memoryLimitMiB, factory);
    } catch (error) {
      isolate.dispose();
      throw error;
    }
  }

  /** False once the isolate was disposed (by us or by the memory-limit watchdog). */
  get healthy(): boolean {
    return !this.isolate.isDisposed;
  }

  /** Start preparing a spare context once the event loop turns (the slot went idle). */
  prepareSpare(): void {
    if (this.spare !== undefined || this.spareKernel !== undefined) return;
    if (this.sparePending !== undefined || this.spareTimer !== undefined) return;
    if (!this.healthy) return;
    this.spareTimer = setImmediate(() => {
      this.spareTimer = undefined;
      if (!this.healthy) return;
      this.sparePending = this.isolate.createContext().then(
        (context) => {
          this.sparePending = undefined;
          if (!this.healthy) {
            releaseQuietly(context);
            return;
          }
          const limits = this.kernelLimits;
          const installed = limits === undefined ? undefined : this.installKernel(context, limits);
          if (installed !== undefined) this.spareKernel = installed;
          else this.spare = context;
        },
        () => {
          this.sparePending = undefined;
        },
      );
    });
  }

  /**
   * The prepared kernel, when one is ready and was installed with `limits`;
   * otherwise undefined (a mismatched one is released).
   */
  takeKernel(limits: KernelLimits): PreparedKernel | undefined {
    const prepared = this.spareKernel;
    if (prepared === undefined) return undefined;
    this.spareKernel = undefined;
    if (
      prepared.limits.maxTimers === limits.maxTimers &&
      prepared.limits.maxTimerCreations === limits.maxTimerCreations
    ) {
      return prepared;
    }
    releaseQuietly(prepared.enterRef);
    releaseQuietly(prepared.context);
    return undefined;
  }

  /** Run the realm script and the kernel in `context` (no guest code), with a bridge bound later. */
  private installKernel(context: IsolateContext, limits: KernelLimits): PreparedKernel | undefined {
    const handles: IsolateReference[] = [];
    try {
      let target: KernelBridge = () => undefined;
      const createEnter = this.realm.runSync(context, { reference: true });
      handles.push(createEnter);
      const install = this.kernel.runSync(context, { reference: true });
      handles.push(install);
      const callback = this.factory.createCallback((op, a, b, c) => target(op as string, a, b, c));
      const config = JSON.stringify(kernelConfig(limits));
      const enterRef = createEnter.applySync(undefined, [install.derefInto(), callback, config], {
        result: { reference: true },
      }) as IsolateReference;
      return {
        context,
        enterRef,
        limits,
        bind(bridge) {
          target = bridge;
        },
      };
    } catch {
      return undefined;
    } finally {
      for (const handle of handles) releaseQuietly(handle);
    }
  }

  /** A fresh, never-used context: the spare when one is ready, otherwise a new one. */
  takeContext(): IsolateContext | Promise<IsolateContext> {
    if (this.spareTimer !== undefined) {
      clearImmediate(this.spareTimer);
      this.spareTimer = undefined;
    }
    const spare = this.spare;
    if (spare !== undefined) {
      this.spare = undefined;
      return spare;
    }
    if (this.sparePending !== undefined) return this.sparePending.then(() => this.takeContext());
    // Sync: the leased isolate is idle, and one thread hop fewer is most of the cost of a short run.
    return this.isolate.createContextSync();
  }

  /** Dispose the isolate (terminating anything still running in it) and any spare. Idempotent. */
  dispose(): void {
    if (this.spareTimer !== undefined) {
      clearImmediate(this.spareTimer);
      this.spareTimer = undefined;
    }
    if (this.spare !== undefined) {
      releaseQuietly(this.spare);
      this.spare = undefined;
    }
    if (this.spareKernel !== undefined) {
      releaseQuietly(this.spareKernel.enterRef);
      releaseQuietly(this.spareKernel.context);
      this.spareKernel = undefined;
    }
    if (this.isolate.isDisposed) return;
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by the memory watchdog between the check and the call.
    }
  }
}

function releaseQuietly(handle: { release(): void }): void {
  try {
    handle.release();
  } catch {
    // The isolate is gone; so is the context.
  }
}
