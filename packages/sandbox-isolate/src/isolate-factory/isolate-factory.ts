/**
 * The structural slice of the isolated-vm 5.x API that {@link IsolateEngine}
 * uses. The real `isolated-vm` module satisfies it as-is, so the peer
 * dependency stays optional: nothing here imports it.
 *
 * These handles are host-side only. None of them is ever handed to guest code:
 * a leaked `Reference` or `Context` is enough for a guest to take over the host.
 *
 * @module
 */

/** Options for {@link IsolateFactory.createIsolate}. */
export interface CreateIsolateOptions {
  /** Heap limit of the isolate, in MiB (isolated-vm's unit; its minimum is 8). */
  memoryLimit: number;
}

/** V8 heap statistics of one isolate, as isolated-vm's `getHeapStatisticsSync()` reports them (bytes). */
export interface IsolateHeapStatistics {
  total_heap_size: number;
  total_heap_size_executable: number;
  total_physical_size: number;
  total_available_size: number;
  used_heap_size: number;
  heap_size_limit: number;
  malloced_memory: number;
  peak_malloced_memory: number;
  does_zap_garbage: number;
  /** Memory outside the V8 heap (large ArrayBuffers) that counts against the isolate's limit. */
  externally_allocated_size: number;
}

/** Transfer options accepted when a value crosses into the isolate. */
export interface IsolateTransferOptions {
  /** Deep-copy the value (structured clone) instead of transferring it by reference. */
  copy?: boolean;
}

/** Mirrors isolated-vm's `Reference`: a host-side pointer to a value inside the isolate. */
export interface IsolateReference {
  /** Set `property` on the referenced object; host functions become copy-only callbacks. */
  setSync(property: string, value: unknown, options?: IsolateTransferOptions): unknown;
  /** Call the referenced function inside the isolate, bounded by `options.timeout` (ms). */
  apply(receiver: undefined, args: unknown[], options?: { timeout?: number }): Promise<unknown>;
  /** Drop this handle. */
  release(): void;
}

/** Mirrors isolated-vm's `Context`: one global scope with its own built-ins. */
export interface IsolateContext {
  /** Host-side reference to the context's global object. */
  readonly global: IsolateReference;
  /** Release the context (and its global reference). */
  release(): void;
}

/** Mirrors isolated-vm's `Script`: source compiled once, runnable in any context of its isolate. */
export interface IsolateScript {
  /** Run in `context` off the host thread; `reference: true` returns the completion value as a Reference. */
  run(context: IsolateContext, options: { timeout?: number; reference: true }): Promise<IsolateReference>;
  /** Run in `context` on the calling thread, bounded by `options.timeout` (ms). */
  runSync(context: IsolateContext, options?: { timeout?: number }): unknown;
  /** Drop the compiled script. */
  release(): void;
}

/** Mirrors isolated-vm's `Isolate`: a V8 heap of its own with a hard memory limit. */
export interface IsolateHandle {
  /** True once disposed, explicitly or by the memory-limit watchdog. */
  readonly isDisposed: boolean;
  /** Create a fresh context off the host thread. */
  createContext(): Promise<IsolateContext>;
  /** Create a fresh context on the calling thread. */
  createContextSync(): IsolateContext;
  /** Compile a classic script for this isolate. */
  compileScriptSync(code: string, options?: { filename?: string }): IsolateScript;
  /** Current heap statistics (bytes). */
  getHeapStatisticsSync(): IsolateHeapStatistics;
  /** Destroy the isolate; running code is terminated and every handle becomes invalid. */
  dispose(): void;
}

/** A host function the guest may call; arguments arrive as structured copies. */
export type HostCallbackFunction = (...args: unknown[]) => void;

/**
 * Mirrors an isolated-vm `Callback` created with `{ ignored: true }`: opaque
 * to the host, a plain function inside the isolate. Calling it copies the
 * arguments out and queues the host function on the host's event loop, in
 * call order; the guest never waits for (or sees) its result or errors.
 */
export type IsolateCallback = object;

/**
 * Creates isolates. {@link createIsolatedVmFactory} builds the real one from
 * the `isolated-vm` package; pass your own only to wrap or instrument it.
 */
export interface IsolateFactory {
  /** Create an isolate with the given heap limit (MiB). */
  createIsolate(options: CreateIsolateOptions): IsolateHandle;
  /** Wrap `fn` as an ignored-mode callback (`new ivm.Callback(fn, { ignored: true })`). */
  createCallback(fn: HostCallbackFunction): IsolateCallback;
}
