import { randomBytes } from "node:crypto";
import { buildKernelSource } from "@suaveplan/sandbox-guest";
import type {
  IsolateContext,
  IsolateFactory,
  IsolateHandle,
  IsolateScript,
} from "../isolate-factory/isolate-factory.js";
import { REALM_SOURCE } from "./realm-entry.js";

/**
 * The kernel's script-scope binding: a per-process random name, so guest
 * code cannot guess it and reflection does not find it (it is not a property
 * of the global object).
 */
const BINDING = `__suaveplan_kernel_${randomBytes(8).toString("hex")}`;
let kernelSource: string | undefined;

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
export class IsolateSlot {
  private spare: IsolateContext | undefined;
  private sparePending: Promise<void> | undefined;
  private spareTimer: NodeJS.Immediate | undefined;

  private constructor(
    readonly isolate: IsolateHandle,
    readonly realm: IsolateScript,
    readonly kernel: IsolateScript,
    /** Heap limit, in MiB. */
    readonly memoryLimitMiB: number,
  ) {}

  /** Create the isolate and compile its scripts once. */
  static create(factory: IsolateFactory, memoryLimitMiB: number): IsolateSlot {
    const isolate = factory.createIsolate({ memoryLimit: memoryLimitMiB });
    try {
      kernelSource ??= buildKernelSource(BINDING);
      const realm = isolate.compileScriptSync(REALM_SOURCE, { filename: "suaveplan:realm" });
      const kernel = isolate.compileScriptSync(kernelSource, { filename: "suaveplan:kernel" });
      return new IsolateSlot(isolate, realm, kernel, memoryLimitMiB);
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
    if (this.spare !== undefined || this.sparePending !== undefined || this.spareTimer !== undefined) return;
    if (!this.healthy) return;
    this.spareTimer = setImmediate(() => {
      this.spareTimer = undefined;
      if (!this.healthy) return;
      this.sparePending = this.isolate.createContext().then(
        (context) => {
          this.sparePending = undefined;
          if (this.healthy) this.spare = context;
          else releaseQuietly(context);
        },
        () => {
          this.sparePending = undefined;
        },
      );
    });
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
    if (this.isolate.isDisposed) return;
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by the memory watchdog between the check and the call.
    }
  }
}

function releaseQuietly(context: IsolateContext): void {
  try {
    context.release();
  } catch {
    // The isolate is gone; so is the context.
  }
}
