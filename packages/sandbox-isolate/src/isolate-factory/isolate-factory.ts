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

/** How a value comes out of the isolate: as a {@link IsolateReference} to it. */
export interface IsolateReferenceOption {
  reference: true;
}

/** Options of {@link IsolateReference.apply}: a timeout (ms) and, optionally, a reference to the result. */
export interface IsolateApplyOptions {
  timeout?: number;
  result?: IsolateReferenceOption;
}

/** Mirrors isolated-vm's `Reference`: a host-side pointer to a value inside the isolate. */
export interface IsolateReference {
  /** Call the referenced function off the host thread, bounded by `options.timeout` (ms). */
  apply(receiver: undefined, args: unknown[], options?: IsolateApplyOptions): Promise<unknown>;
  /** Call the referenced function on the host thread (`{ result: { reference: true } }` for a reference). */
  applySync(receiver: undefined, args: unknown[], options?: IsolateApplyOptions): unknown;
  /** A token that turns back into the referenced value when passed into its own isolate. */
  derefInto(): unknown;
  /** Drop this handle. */
  release(): void;
}

/** Mirrors isolated-vm's `Context`: one global scope with its own built-ins. */
export interface IsolateContext {
  /** Release the context (and its global reference). */
  release(): void;
}

/** Mirrors isolated-vm's `Script`: source compiled once, runnable in any context of its isolate. */
export interface IsolateScript {
  /** Run in `context` on the host thread; `reference: true` returns the completion value as a Reference. */
  runSync(context: IsolateContext, options: { timeout?: number; reference: true }): IsolateReference;
  /** Run in `context` on the host thread and copy the completion value out. */
  runSync(context: IsolateContext, options?: { timeout?: number }): unknown;
  /** The V8 code cache made at compile time, when compiled with `produceCachedData`. */
  readonly cachedData?: unknown;
  /** True when the `cachedData` given to the compile did not fit and the script was compiled anew. */
  readonly cachedDataRejected?: boolean;
  /** Drop the compiled script. */
  release(): void;
}

/** Mirrors isolated-vm's `Isolate`: a V8 heap of its own with a hard memory limit. */
export interface IsolateHandle {
  /** True once disposed, explicitly or by the memory-limit watchdog. */
  readonly isDisposed: boolean;
  /** CPU time the isolate has used, in ns (isolated-vm's `cpuTime`). */
  readonly cpuTime?: bigint;
  /** Create a fresh context off the host thread. */
  createContext(): Promise<IsolateContext>;
  /** Create a fresh context on the calling thread. */
  createContextSync(): IsolateContext;
  /** Compile a classic script for this isolate; throws the isolate's SyntaxError (`message [file:line:column]`). */
  compileScriptSync(
    code: string,
    options?: { filename?: string; cachedData?: unknown; produceCachedData?: boolean },
  ): IsolateScript;
  /** Current heap statistics (bytes). Waits for code running in the isolate. */
  getHeapStatisticsSync(): IsolateHeapStatistics;
  /** Destroy the isolate; running code is terminated and every handle becomes invalid. */
  dispose(): void;
}

/** A host function the guest may call: primitive arguments in, a primitive result out. */
export type HostCallbackFunction = (...args: unknown[]) => unknown;

/**
 * Mirrors an isolated-vm `Callback` (synchronous, the default): opaque to
 * the host, a plain function inside the isolate. Calling it copies the
 * arguments out, runs the host function on the host thread while the isolate
 * waits, and copies its result back in.
 */
export type IsolateCallback = object;

/**
 * Creates isolates. {@link createIsolatedVmFactory} builds the real one from
 * the `isolated-vm` package; pass your own only to wrap or instrument it.
 */
export interface IsolateFactory {
  /** Create an isolate with the given heap limit (MiB). */
  createIsolate(options: CreateIsolateOptions): IsolateHandle;
  /**
   * Wrap `fn` as a copy-only callback: synchronous (`new ivm.Callback(fn)`), or with
   * `ignored` one the guest's thread does not wait for (`{ ignored: true }`: it returns
   * undefined at once, and `fn` runs later on the host's thread).
   */
  createCallback(fn: HostCallbackFunction, options?: { ignored?: true }): IsolateCallback;
}
