import type { IsolateFactory, IsolateHandle, IsolateScript } from "../isolate-factory/isolate-factory.js";
import { GUEST_BOOTSTRAP_SOURCE } from "./guest-bootstrap.js";

/**
 * One isolate plus its compiled bootstrap. A slot runs one execution at a
 * time (each in a fresh context) and is reused while it stays healthy.
 *
 * @internal
 */
export class IsolateSlot {
  private constructor(
    readonly isolate: IsolateHandle,
    readonly bootstrap: IsolateScript,
    /** Heap limit, in MiB. */
    readonly memoryLimitMiB: number,
  ) {}

  /** Create the isolate and compile the bootstrap once. */
  static create(factory: IsolateFactory, memoryLimitMiB: number): IsolateSlot {
    const isolate = factory.createIsolate({ memoryLimit: memoryLimitMiB });
    try {
      const bootstrap = isolate.compileScriptSync(GUEST_BOOTSTRAP_SOURCE, {
        filename: "suaveplan:bootstrap",
      });
      return new IsolateSlot(isolate, bootstrap, memoryLimitMiB);
    } catch (error) {
      isolate.dispose();
      throw error;
    }
  }

  /** False once the isolate was disposed (by us or by the memory-limit watchdog). */
  get healthy(): boolean {
    return !this.isolate.isDisposed;
  }

  /** Dispose the isolate; terminates anything still running in it. Idempotent. */
  dispose(): void {
    if (this.isolate.isDisposed) return;
    try {
      this.isolate.dispose();
    } catch {
      // Already disposed by the memory watchdog between the check and the call.
    }
  }
}
