import { createRequire } from "node:module";

/** The part of isolated-vm the bench's raw primitives use (an optional peer: loaded only when a row needs it). */
export interface IsolatedVmLike {
  Isolate: new (options: {
    memoryLimit: number;
  }) => {
    createContextSync(): {
      global: { setSync(name: string, value: unknown): void };
      eval(code: string, options: Record<string, unknown>): Promise<unknown>;
      evalSync(code: string, options?: Record<string, unknown>): unknown;
      release(): void;
    };
    dispose(): void;
  };
  Reference: new (value: unknown) => unknown;
}

/** isolated-vm as this package resolves it; throws when it is not installed (the row then says so). */
export function loadIsolatedVm(): IsolatedVmLike {
  return createRequire(import.meta.url)("isolated-vm") as IsolatedVmLike;
}
