import type { SandboxCode } from "../error-codes/sandbox-codes.js";

/** The five built-in engines. `isolate` and `quickjs` are security boundaries on their own. */
export type BuiltinEngineName = "vm" | "worker" | "spawn" | "isolate" | "quickjs";

/**
 * An engine's name: a built-in one, or any name an engine was registered
 * under (`registerEngine` in `@suaveplan/sandbox`) — the list is open, so a
 * sixth engine needs no change here.
 */
export type EngineName = BuiltinEngineName | (string & {});

/**
 * The built-in engine names: the V8 engines in tier order (weakest isolation
 * first), then QuickJS (a security boundary in this process, without a JIT).
 */
export const ENGINE_NAMES: readonly BuiltinEngineName[] = Object.freeze([
  "vm",
  "worker",
  "spawn",
  "isolate",
  "quickjs",
]);

/** Lowercase letters, digits and dashes, starting with a letter: what an engine may be called. */
export const ENGINE_NAME_PATTERN = /^[a-z][a-z0-9-]{0,63}$/;

/** A source of "now" in milliseconds since the epoch. Defaults to `Date.now`. */
export type Clock = () => number;

/** Console levels captured from guest code. */
export type LogLevel = "log" | "info" | "warn" | "error" | "debug";

/** One captured console line. */
export interface LogEntry {
  /** The console method the guest called. */
  level: LogLevel;
  /** The formatted arguments, joined by spaces. */
  message: string;
}

/** Pool settings for {@link SandboxConfig.pool}. */
export interface SandboxPoolConfig {
  /** Engines created up front. */
  minSize: number;
  /** Upper bound on live engines. */
  maxSize: number;
  /** An engine is destroyed and replaced after this many executions. */
  maxExecutionsPerEngine: number;
  /** Idle engines above `minSize` older than this (ms) are reclaimed. */
  idleTimeoutMs: number;
  /** Callers waiting for a free engine (0 = fail fast with POOL_EXHAUSTED). */
  maxQueue: number;
  /** How long a queued caller waits (ms) before POOL_EXHAUSTED. */
  acquireTimeoutMs: number;
}

/** Fully resolved sandbox configuration (see `SandboxConfigPartialSchema` for what users write). */
export interface SandboxConfig {
  /** Which engine runs the code. Default `"vm"`. */
  engine: EngineName;
  /** Wall-clock limit per execution, in ms. */
  timeout: number;
  /** Memory limit per execution, in bytes (enforced by worker, spawn and isolate, not by vm; what each counts: `capabilities.memoryAccounting`). */
  memoryLimit: number;
  /** Cap on captured console output and returned text, in bytes. */
  maxOutputSize: number;
  /** Longest accepted source, in UTF-16 code units. */
  maxCodeLength: number;
  /** Built-in safe modules (`Math`, `JSON`, `Date`) made available by name. */
  allowedModules: string[];
  /** Executions allowed per sliding window; `undefined` = unlimited. */
  maxExecutionsPerWindow: number | undefined;
  /** Length of the rate-limit window, in ms. */
  rateLimitWindow: number;
  /** Record an audit entry per execution. */
  enableAudit: boolean;
  /** The language of guest code unless an execution says otherwise. Default `"javascript"`. */
  language: SandboxLanguage;
  /** Run through a `SandboxPool` when set. */
  pool: SandboxPoolConfig | undefined;
  /** Engine-specific options, handed to the engine's factory as they are (e.g. spawn's `env`, isolate's `maxTimers`). */
  engineOptions: Readonly<Record<string, unknown>>;
}

/** The language guest code is written in. TypeScript has its types erased in place before it runs. */
export type SandboxLanguage = "javascript" | "typescript";

/** Per-execution overrides. */
export interface SandboxOptions {
  /**
   * The language of `code`. `"typescript"` erases the types in place
   * (positions are kept, so errors name the original line and column) before
   * the code is prepared; TypeScript that would need compiling (`enum`,
   * `namespace`, parameter properties) resolves `SANDBOX_SYNTAX_ERROR`.
   * Default `"javascript"` (or the sandbox's `language`).
   */
  language?: SandboxLanguage;
  /** Wall-clock limit for this execution, in ms. */
  timeout?: number;
  /** Heap limit for this execution, in bytes. */
  memoryLimit?: number;
  /** Output cap for this execution, in bytes. */
  maxOutputSize?: number;
  /** Called with each console line as the guest produces it (streaming). */
  onLog?: (entry: LogEntry) => void;
  /**
   * Cancels the execution: it resolves `SANDBOX_CANCELLED` and the engine
   * stops the guest as its `capabilities.abortsRunningCode` says. An
   * already-aborted signal never starts the run.
   */
  signal?: AbortSignal;
  /**
   * This execution's id (1–128 letters, digits, `_`, `-`): the idempotency key
   * of engines that dispatch elsewhere — the `queue` engine runs one execution
   * per id, and a second `execute` with the same id gets the first one's
   * result. Engines that run locally ignore it.
   */
  executionId?: string;
  /**
   * Host functions the guest may call as `tools.<name>(input)` — the engine
   * level of host tools (the facade's `tools` option builds this, with
   * validation, approval and a journal).
   */
  hostCalls?: HostCalls;
}

/** What answers a guest's `tools.<name>(input)` calls (see {@link SandboxOptions.hostCalls}). */
export interface HostCalls {
  /** The names the guest's frozen `tools` global offers. */
  readonly names: readonly string[];
  /**
   * Run one call with the decoded input. Resolve with the output (copied into
   * the guest) or reject; only a rejection's string `name`, `message` and
   * `tool` reach the guest.
   */
  call(name: string, input: unknown, id: string): Promise<unknown>;
  /** Largest output the guest may receive, in bytes. Default 1 MiB. */
  readonly maxReplyBytes?: number;
  /** Largest input the guest may send, in bytes. Default 1 MiB. */
  readonly maxCallBytes?: number;
}

/** What the guest threw (or rejected with), as the guest saw it: guest frames only, never a host path. */
export interface GuestErrorInfo {
  /** The error's `name` (`TypeError`, …); `""` when the thrown value was not an error. */
  name: string;
  /** The error's message; for a non-error throw, the value as the console would show it. */
  message: string;
  /** Guest-only stack text (`TypeError: boom\n    at sandbox.js:1:7`); `""` when there is none. */
  stack: string;
  /** 1-based line in the guest code, when known. */
  line?: number;
  /** 1-based column in the guest code, when known. */
  column?: number;
  /** The registered source module whose evaluation threw, when it was one. */
  module?: string;
  /** True when the value was a rejection nothing handled (it fails the run, as in Node's default mode). */
  unhandledRejection?: boolean;
}

/** Fields every result carries. */
interface SandboxResultBase {
  /** Wall-clock duration, in ms. */
  duration: number;
  /** Captured console output, truncated at `maxOutputSize` bytes. */
  logs: LogEntry[];
  /** Bytes attributed to the execution (heap and, where the engine counts it, off-heap memory), when the engine can tell. */
  memoryUsed?: number;
  /** What the execution used (see {@link SandboxUsage}); set by every built-in engine. */
  usage?: SandboxUsage;
}

/**
 * What one execution used. `cpuMs` is present only where the engine can
 * measure it (`capabilities.measuresCpu` says how exactly).
 */
export interface SandboxUsage {
  /** Wall-clock time, in ms. */
  wallMs: number;
  /** CPU time of the guest's thread, process or isolate, in ms, when the engine measures it. */
  cpuMs?: number;
  /** Heap bytes attributed to the execution, when the engine can tell. */
  heapBytes?: number;
  /** UTF-8 bytes of the console lines kept. */
  outputBytes: number;
  /** Guest→host tool calls made. */
  toolCalls: number;
  /** Bytes of tool-call input and output that crossed, both ways. */
  toolBytes: number;
}

/** The code ran to completion and its value crossed back. */
export interface SandboxSuccess<T = unknown> extends SandboxResultBase {
  success: true;
  /** The completion value (awaited when it is a promise), copied out of the sandbox by the value codec. */
  result: T;
  error?: undefined;
  errorCode?: undefined;
  guestError?: undefined;
  diagnostics?: undefined;
}

/** The run failed; `errorCode` says how (guest error, syntax, timeout, memory, cancelled, engine). */
export interface SandboxFailure extends SandboxResultBase {
  success: false;
  result?: undefined;
  /** Human-readable failure text ending with its code (never a host stack trace or path). */
  error: string;
  /** Machine-readable failure code. */
  errorCode: SandboxCode;
  /** Set for `SANDBOX_GUEST_ERROR` and `SANDBOX_SYNTAX_ERROR`: what the guest threw, with its location. */
  guestError?: GuestErrorInfo;
  /** Set for `SANDBOX_TYPECHECK_FAILED`: what the TypeScript compiler reported, in code order. */
  diagnostics?: TypecheckDiagnostic[];
}

/** One TypeScript compiler error in guest code (`typecheck: true`). */
export interface TypecheckDiagnostic {
  /** 1-based line in the code as written. */
  line: number;
  /** 1-based column in the code as written. */
  column: number;
  /** The compiler's message (chained messages joined by newlines). */
  message: string;
  /** The compiler's error number, e.g. `2322` (shown as `TS2322`). */
  code: number;
}

/**
 * The outcome of one execution, discriminated on `success`. `execute`
 * resolves this for every guest failure; it rejects only for misuse.
 */
export type SandboxResult<T = unknown> = SandboxSuccess<T> | SandboxFailure;

/** A failure result whose text ends with its code: the one way every package builds one. */
export function failure(
  code: SandboxCode,
  text: string,
  extra: Partial<Omit<SandboxFailure, "success" | "error" | "errorCode">> = {},
): SandboxFailure {
  return { duration: 0, logs: [], ...extra, success: false, error: `${text} (${code})`, errorCode: code };
}

/** setTimeout's ceiling (2^31 − 1 ms); longer delays fire at once, so every timer and interval is capped here. */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A module made available to guest code as a global of the same name.
 * `exports` is plain data copied into the sandbox; `source` is JavaScript
 * evaluated inside the sandbox whose `module.exports` becomes the value.
 */
export interface SandboxModule {
  /** A JavaScript identifier; the global name the guest uses. */
  name: string;
  /** Plain, copyable data. */
  exports?: unknown;
  /** Guest-side source assigning `module.exports`. */
  source?: string;
  /** The language of `source`; `"typescript"` has its types erased in place at registration. Default `"javascript"`. */
  language?: SandboxLanguage;
}

/** What an engine guarantees, as data (callers never special-case engine names). */
export interface EngineCapabilities {
  /** True only when the engine alone is a security boundary (a V8 isolate, a WebAssembly interpreter). */
  securityBoundary: boolean;
  /**
   * The JavaScript engine that runs guest code, where it is not V8. Errors it
   * raises itself carry its own wording (`cannot read property 'x' of null`
   * in QuickJS), and a stack frame's column is its idea of where on the line
   * the frame is (the line is the same; the column may name another token of
   * it). What the kernel says (codes, console text, results, thrown values'
   * names and messages) is the same on every engine. Absent: V8.
   */
  javascriptEngine?: "v8" | "quickjs";
  /** One-line statement of the engine's security tier, for docs and CLI output. */
  tier: string;
  /** `memoryLimit` is enforced by the engine. */
  enforcesMemoryLimit: boolean;
  /** The timeout bounds never-settling promises and timers, not only sync loops. */
  boundsAsyncWork: boolean;
  /** `onLog` is called while the guest runs, not after it ends. */
  streamsLogs: boolean;
  /**
   * `options.signal` stops guest code even while it runs synchronously (the
   * worker is terminated, the child killed, the isolate disposed). False for
   * vm, where synchronous guest code runs on the caller's own thread: the
   * abort lands at its next await, timer or tool call, and the synchronous
   * part stays bounded by the timeout.
   */
  abortsRunningCode: boolean;
  /**
   * How `usage.cpuMs` is measured: `"isolate"` — V8's CPU time of the
   * isolate; `"entries"` — the time the guest's code ran inside its realm, on
   * its own thread (wall time of the realm's entries, which hold no I/O);
   * `false` — not measured.
   */
  measuresCpu: "isolate" | "entries" | false;
  /**
   * What `memoryLimit` counts and how exactly, per kind of memory (see
   * {@link MemoryAccounting}). Absent: only what `enforcesMemoryLimit` says.
   */
  memoryAccounting?: MemoryAccounting;
}

/** The kinds of memory a guest can allocate, as {@link MemoryAccounting} names them. */
export type MemoryKind = "heap" | "strings" | "arrayBuffers" | "sharedArrayBuffers" | "wasmMemory";

/**
 * How one kind of memory is held to `memoryLimit`:
 * - `"allocation"` — an allocation that would pass the limit fails at once (exact);
 * - `"sampled"` — usage is sampled every `sampleIntervalMs`, also while guest
 *   code runs synchronously, and the run ends `SANDBOX_MEMORY_EXCEEDED` at the
 *   first sample past the limit: it can overshoot by what the guest allocates
 *   in one interval;
 * - `"yields"` — sampled as `"sampled"`, but only while the guest's thread is
 *   free (between its entries, while it awaits a timer or a tool call): a
 *   synchronous stretch can overshoot without bound until the timeout ends it;
 * - `false` — not counted.
 */
export type MemoryLimitMode = "allocation" | "sampled" | "yields" | false;

/** What `memoryLimit` bounds on one engine, as data (see {@link EngineCapabilities.memoryAccounting}). */
export interface MemoryAccounting {
  /** How each kind of memory is held to the limit. */
  readonly kinds: Readonly<Record<MemoryKind, MemoryLimitMode>>;
  /** The sampling interval of the `"sampled"` and `"yields"` kinds, in ms. */
  readonly sampleIntervalMs?: number;
  /** Bytes the engine itself may add on top of `memoryLimit` before it ends a run (runtime overhead counted with the guest's). */
  readonly allowanceBytes?: number;
  /** One sentence on how exact the limit is, for docs and CLI output. */
  readonly exactness: string;
}

/** Resource limits an engine is constructed with. */
export interface EngineLimits {
  /** Wall-clock limit per execution, in ms. */
  timeout: number;
  /** Heap limit per execution, in bytes. */
  memoryLimit: number;
  /** Output cap, in bytes. */
  maxOutputSize: number;
}

/** The contract every engine implements. */
export interface SandboxEngine {
  /** Which engine this is. */
  readonly name: EngineName;
  /** What this engine guarantees. */
  readonly capabilities: EngineCapabilities;
  /**
   * Run `code`. Resolves a result for every failure — the guest's, bad input
   * (`SANDBOX_INVALID_OPTIONS`), `options.signal` (`SANDBOX_CANCELLED`), the
   * engine's own and use after `destroy()` (`SANDBOX_ENGINE_DISPOSED`). Never rejects.
   */
  execute(code: string, context?: Record<string, unknown>, options?: SandboxOptions): Promise<SandboxResult>;
  /** Make a module available to later executions. */
  registerModule(module: SandboxModule): void;
  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean;
  /** Drop registered modules and any warm state. */
  reset(): void;
  /** Release every worker, process, isolate and timer. Idempotent. */
  destroy(): Promise<void>;
}
