import { randomBytes } from "node:crypto";
import { buildKernelSource, type KernelBridge, kernelConfig } from "@suaveplan/sandbox-guest/realm";
import type {
  IsolateContext,
  IsolateFactory,
  IsolateHandle,
  IsolateReference,
  IsolateScript,
} from "../isolate-factory/isolate-factory.js";
import { realmSource } from "./realm-entry.js";
import { noteIsolateCreated, noteIsolateDisposed } from "./teardown-guard.js";

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

/** A fresh context with the kernel installed and no guest code run yet; single-use. */
export interface PreparedKernel {
  readonly context: IsolateContext;
  /** The kernel's `enter` function. */
  readonly enterRef: IsolateReference;
  readonly limits: KernelLimits;
  /** Point the kernel's bridge at the execution that takes this kernel. */
  bind(bridge: KernelBridge): void;
}

export class IsolateSlot {
  /** The next execution's kernel, made off the caller's path: still being made, or ready (undefined if that failed). */
  private spare: { limits: KernelLimits; kernel: Promise<PreparedKernel | undefined> } | undefined;
  private spareTimer: NodeJS.Immediate | undefined;
  /** The limits of the last execution: what the next spare kernel is installed with. */
  kernelLimits: KernelLimits | undefined;

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
    noteIsolateCreated(isolate);
    try {
      kernelSource ??= buildKernelSource(BINDING);
      const realm = isolate.compileScriptSync(realmSource(memoryLimitMiB), { filename: "suaveplan:realm" });
      const kernel = compileKernel(isolate, kernelSource);
      return new IsolateSlot(isolate, realm, kernel, memoryLimitMiB, factory);
    } catch (error) {
      isolate.dispose();
      noteIsolateDisposed(isolate);
      throw error;
    }
  }

  /** False once the isolate was disposed (by us or by the memory-limit watchdog). */
  get healthy(): boolean {
    return !this.isolate.isDisposed;
  }

  /** Start making the next execution's kernel once the event loop turns (the slot went back to the pool). */
  prepareSpare(): void {
    const limits = this.kernelLimits;
    if (this.spare !== undefined || this.spareTimer !== undefined || limits === undefined || !this.healthy)
      return;
    this.spareTimer = setImmediate(() => {
      this.spareTimer = undefined;
      if (this.spare !== undefined || !this.healthy) return;
      this.spare = { limits, kernel: this.makeKernel(limits).catch(() => undefined) };
    });
  }

  /**
   * A fresh context with the kernel installed with `limits`: the spare when it
   * was made with the same limits (waiting for it when it is still being
   * made), otherwise one made now. Rejects when the isolate fails.
   */
  async takeKernel(limits: KernelLimits): Promise<PreparedKernel> {
    if (this.spareTimer !== undefined) {
      clearImmediate(this.spareTimer);
      this.spareTimer = undefined;
    }
    const spare = this.spare;
    this.spare = undefined;
    const kernel = spare === undefined ? undefined : await spare.kernel;
    if (kernel !== undefined) {
      if (
        kernel.limits.maxTimers === limits.maxTimers &&
        kernel.limits.maxTimerCreations === limits.maxTimerCreations
      )
        return kernel;
      releaseKernel(kernel);
    }
    return this.makeKernel(limits);
  }

  /**
   * Create a context and run the realm script and the kernel in it (no guest
   * code), with a bridge bound later. The context is made off this thread (the
   * larger part, and this thread is free for other executions meanwhile); the
   * install runs here, as three async calls would cost more in thread hops
   * than it does.
   */
  private async makeKernel(limits: KernelLimits): Promise<PreparedKernel> {
    const context = await this.isolate.createContext();
    const handles: IsolateReference[] = [];
    try {
      let target: KernelBridge = () => undefined;
      const createEnter = this.realm.runSync(context, { reference: true });
      handles.push(createEnter);
      const install = this.kernel.runSync(context, { reference: true });
      handles.push(install);
      const callback = this.factory.createCallback((op, a, b, c) => target(op as string, a, b, c));
      const queued = this.factory.createCallback((op, a, b, c) => target(op as string, a, b, c), {
        ignored: true,
      });
      const config = JSON.stringify(kernelConfig(limits));
      const enterRef = createEnter.applySync(undefined, [install.derefInto(), callback, queued, config], {
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
    } catch (error) {
      releaseQuietly(context);
      throw error;
    } finally {
      for (const handle of handles) releaseQuietly(handle);
    }
  }

  /** Dispose the isolate (terminating anything still running in it) and any spare. Idempotent. */
  dispose(): void {
    if (this.spareTimer !== undefined) {
      clearImmediate(this.spareTimer);
      this.spareTimer = undefined;
    }
    const spare = this.spare;
    this.spare = undefined;
    if (spare !== undefined)
      void spare.kernel.then((kernel) => kernel !== undefined && releaseKernel(kernel));
    // Disposed by us or, before, by isolated-vm's memory limit: its teardown may be running either way.
    noteIsolateDisposed(this.isolate);
    if (this.isolate.isDisposed) return;
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by the memory watchdog between the check and the call.
    }
  }
}

function releaseKernel(kernel: PreparedKernel): void {
  releaseQuietly(kernel.enterRef);
  releaseQuietly(kernel.context);
}

function releaseQuietly(handle: { release(): void }): void {
  try {
    handle.release();
  } catch {
    // The isolate is gone; so is the context.
  }
}
