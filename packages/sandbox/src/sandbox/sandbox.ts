import { context as otelContext } from "@opentelemetry/api";
import { type AuditEntry, AuditLogger, type AuditStatistics } from "@suaveplan/sandbox-core/audit-logger";
import {
  CodeTransformer,
  LruCache,
  MAX_CACHED_CODE_LENGTH,
  type TransformResult,
  withPreparedCode,
} from "@suaveplan/sandbox-core/code-transformer";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { ModuleResolver } from "@suaveplan/sandbox-core/module-resolver";
import { SandboxPool } from "@suaveplan/sandbox-core/pool";
import { ResourceLimiter, truncateOutput } from "@suaveplan/sandbox-core/resource-limiter";
import { ResultStreamer, type StreamChunk } from "@suaveplan/sandbox-core/result-streamer";
import {
  type DurationInput,
  parseSandboxConfig,
  type SandboxConfigInput,
  type SizeInput,
  withoutUndefined,
} from "@suaveplan/sandbox-core/schemas";
import {
  type ExecutionSpan,
  executionOutcome,
  recordDuration,
  recordExecution,
  recordRuleBlock,
  startExecutionSpan,
} from "@suaveplan/sandbox-core/telemetry";
import {
  type EngineCapabilities,
  type EngineName,
  failure,
  type LogEntry,
  type SandboxConfig,
  type SandboxEngine,
  type SandboxModule,
  type SandboxOptions,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { checkExecutionInput, withoutCode } from "@suaveplan/sandbox-guest";
import {
  type ApproveToolCall,
  createToolRunner,
  mergeTools,
  type NormalisedToolSet,
  normaliseTools,
  resolveToolLimits,
  type ToolCallRecord,
  type ToolLimits,
  type ToolRunner,
  type ToolSet,
  toolDeclarations,
} from "@suaveplan/sandbox-tools";
import {
  contextDeclarations,
  createTypechecker,
  stripModuleTypes,
  stripTypes,
  type Typechecker,
} from "@suaveplan/sandbox-typescript";
import { type EngineFactory, engineLoader } from "./engine-registry.js";
import { functionCallSource } from "./function-source.js";
import { ModuleSyncedEngine } from "./module-synced-engine.js";

/** A chunk of {@link Sandbox.executeStream}: `log` chunks as the guest writes them, then one `complete`. */
export type SandboxStreamChunk = StreamChunk;

/** Host tools and their limits: what `createSandbox` and `execute` accept besides the core options. */
export interface SandboxToolOptions extends ToolLimits {
  /** Tools the guest may call as `await tools.<name>(input)` (the AI SDK's `tool()` shape). Per-call tools win by name. */
  tools?: ToolSet | undefined;
  /** Every hook given (sandbox-level and per-execution) must approve a call before its handler runs. */
  approveToolCall?: ApproveToolCall | undefined;
}

/** TypeScript checking: what `createSandbox` and `execute` accept besides `language`. */
export interface SandboxTypecheckOptions {
  /**
   * Type-check TypeScript code (`language: "typescript"`) before anything
   * runs, against the tools' declarations ({@link Sandbox.toolDeclarations}),
   * the context globals, the ES2023 library and the guest globals (`console`,
   * timers). Errors resolve `SANDBOX_TYPECHECK_FAILED` with `diagnostics`;
   * no guest code and no tool handler runs. Needs the `typescript` package.
   * The compiler runs on a worker thread that `destroy()` ends. Default false.
   */
  typecheck?: boolean | undefined;
}

/** What `createSandbox` accepts: the core config plus host tools and typecheck. */
export type CreateSandboxConfig = SandboxConfigInput & SandboxToolOptions & SandboxTypecheckOptions;

/**
 * Per-execution options: the core ones plus host tools and typecheck.
 * `timeout` is ms and `memoryLimit`/`maxOutputSize` are bytes as numbers, or
 * strings with their unit (`"1s"`, `"64MiB"`; see the README's Units section).
 */
export type SandboxExecuteOptions = Omit<SandboxOptions, "timeout" | "memoryLimit" | "maxOutputSize"> & {
  timeout?: DurationInput;
  memoryLimit?: SizeInput;
  maxOutputSize?: SizeInput;
} & SandboxToolOptions &
  SandboxTypecheckOptions;

/** What the facade's `execute` resolves: the engine's result plus the journal of the run's tool calls. */
export type SandboxRunResult<T = unknown> = SandboxResult<T> & {
  /** Every tool call the guest made, in call order (empty without tools). */
  calls: ToolCallRecord[];
};

/** Totals reported by {@link Sandbox.getStatistics}. */
export interface SandboxStatistics extends AuditStatistics {
  /** The engine this sandbox runs. */
  engine: EngineName;
  /** Executions admitted since creation (or the last reset). */
  totalExecutions: number;
  /** Executions inside the current rate-limit window. */
  windowExecutions: number;
}

/** A configured sandbox: one API over every engine. Create it with {@link createSandbox}. */
export interface Sandbox extends AsyncDisposable {
  /** The validated configuration, defaults applied. */
  readonly config: Readonly<SandboxConfig>;
  /** Run `code`; resolves a result for every failure, bad arguments included (`SANDBOX_INVALID_OPTIONS`); never rejects. */
  execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxExecuteOptions,
  ): Promise<SandboxRunResult>;
  /** Run `code`, yielding console lines as they happen and the result last. */
  executeStream(
    code: string,
    context?: Record<string, unknown>,
    options?: Omit<SandboxExecuteOptions, "onLog">,
  ): AsyncIterable<SandboxStreamChunk>;
  /** Call `fn` inside the sandbox with JSON-safe `args`; `fn` is sent as source, not as a live function. */
  executeFunction(
    fn: (...args: never[]) => unknown,
    args?: readonly unknown[],
    options?: SandboxExecuteOptions,
  ): Promise<SandboxRunResult>;
  /** TypeScript declarations of the guest's `tools` global, each description as TSDoc: what a model's prompt needs. */
  toolDeclarations(): string;
  /** Make a module available to guest code as a global of the same name. */
  registerModule(module: SandboxModule): void;
  /** Remove a registered module; true when it existed. */
  unregisterModule(name: string): boolean;
  /** Audit entries, oldest first. */
  getAuditLog(): AuditEntry[];
  /** Aggregated counters. */
  getStatistics(): SandboxStatistics;
  /** What the configured engine guarantees (loads the engine). */
  getCapabilities(): Promise<EngineCapabilities>;
  /** Forget modules, audit entries and rate-limit history; keeps the engine. */
  reset(): void;
  /** Release the engine (or pool) and every resource. Idempotent. */
  destroy(): Promise<void>;
}

/**
 * Create a sandbox. Validates `config` (throws `SANDBOX_INVALID_CONFIG` naming
 * the field) and loads the selected engine lazily on first use, so an engine
 * you never select is never imported.
 *
 * @example
 * const sandbox = createSandbox({ engine: "isolate", timeout: 1000 });
 * const { result } = await sandbox.execute("2 + 3"); // 5
 * await sandbox.destroy();
 */
export function createSandbox(config: CreateSandboxConfig = {}): Sandbox {
  const {
    tools,
    approveToolCall,
    maxToolCalls,
    maxConcurrentToolCalls,
    maxToolPayloadBytes,
    typecheck,
    ...core
  } = config ?? {};
  const parsed = parseSandboxConfig(core);
  const typecheckProblem = checkTypecheck(typecheck, parsed.language, "config");
  if (typecheckProblem !== undefined) {
    throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, `Invalid sandbox config: ${typecheckProblem}`);
  }
  // An engine nobody registered fails here, naming the ones that exist, not at the first call.
  engineLoader(parsed.engine);
  if (approveToolCall !== undefined && typeof approveToolCall !== "function") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      "Invalid sandbox config: config.approveToolCall: must be a function (call) => boolean | Promise<boolean>",
    );
  }
  const toolConfig: ToolConfig = {
    tools: normaliseTools(tools, "config"),
    limits: resolveToolLimits({ maxToolCalls, maxConcurrentToolCalls, maxToolPayloadBytes }, "config"),
    approve: approveToolCall,
    typecheck: typecheck === true,
  };
  return new SandboxFacade(parsed, toolConfig);
}

interface ToolConfig {
  tools: NormalisedToolSet;
  limits: ToolLimits;
  approve: ApproveToolCall | undefined;
  /** The sandbox-level `typecheck` (it applies to TypeScript executions). */
  typecheck: boolean;
}

/** Why a `typecheck` value is refused, naming the field; undefined when it is fine. */
function checkTypecheck(value: unknown, language: string, root: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") return `${root}.typecheck: must be a boolean (got ${typeof value})`;
  if (value && language !== "typescript")
    return `${root}.typecheck: needs language "typescript" (set ${root}.language); JavaScript is not type-checked`;
  return undefined;
}

/** How one execution's TypeScript is handled: erased, and checked first when `typecheck`. */
interface TypeScriptPlan {
  typecheck: boolean;
  /** The declarations the program is checked against (tools, context and module globals). */
  declarations: () => string;
}

type Runner = Pick<SandboxEngine, "execute" | "destroy">;

class SandboxFacade implements Sandbox {
  readonly config: Readonly<SandboxConfig>;
  private readonly audit: AuditLogger;
  private readonly limiter: ResourceLimiter;
  private readonly resolver: ModuleResolver;
  private readonly transformer: CodeTransformer;
  /**
   * This sandbox's verdicts on code it ran lately (up to 16 KiB each, 128 at most): a program sent
   * again (an agent's retry, a playground's rerun) is not analysed again. The parse itself (an acorn
   * tree, many times the code's size) is kept only for code of at most {@link KEPT_PARSE_LENGTH}
   * characters; longer code sent again is parsed once, by the engine. Per sandbox: its rules are
   * fixed at construction.
   */
  private readonly verdicts = new LruCache<string, TransformResult>(128);
  private runner: Promise<Runner> | undefined;
  private factory: Promise<EngineFactory> | undefined;
  private destroyed = false;
  private destroying: Promise<void> | undefined;
  private capabilities: EngineCapabilities | undefined;
  private typechecker: Typechecker | undefined;

  constructor(
    config: SandboxConfig,
    private readonly toolConfig: ToolConfig,
  ) {
    this.config = Object.freeze({ ...config });
    this.audit = new AuditLogger();
    this.limiter = new ResourceLimiter({
      maxExecutionsPerWindow: config.maxExecutionsPerWindow,
      rateLimitWindow: config.rateLimitWindow,
      maxOutputSize: config.maxOutputSize,
    });
    this.resolver = new ModuleResolver(config.allowedModules);
    this.transformer = new CodeTransformer({ maxCodeLength: config.maxCodeLength });
    // The compiler loads in the background (about a second) so the first typecheck does not wait for it.
    if (toolConfig.typecheck) this.getTypechecker().warm();
  }

  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxExecuteOptions,
  ): Promise<SandboxRunResult> {
    const started = performance.now();
    const {
      tools,
      approveToolCall,
      maxToolCalls,
      maxConcurrentToolCalls,
      maxToolPayloadBytes,
      typecheck,
      ...core
    } = options ?? {};
    // The same check every engine makes: bad input resolves SANDBOX_INVALID_OPTIONS, it never throws.
    const checked = checkExecutionInput(code, context, options === undefined ? undefined : core);
    if (!checked.ok) return { ...checked.result, calls: [] };
    const language = checked.options.language ?? this.config.language;
    const typecheckProblem = checkTypecheck(typecheck, language, "options");
    if (typecheckProblem !== undefined) {
      const failed = failure(SANDBOX_CODES.INVALID_OPTIONS, `Invalid execution options: ${typecheckProblem}`);
      return { ...failed, calls: [] };
    }
    let runner: ToolRunner | undefined;
    let toolSet: NormalisedToolSet;
    try {
      toolSet = mergeTools(this.toolConfig.tools, normaliseTools(tools, "options"));
      if (approveToolCall !== undefined && typeof approveToolCall !== "function") {
        throw new SandboxError(
          SANDBOX_CODES.INVALID_OPTIONS,
          "Invalid execution options: options.approveToolCall: must be a function (call) => boolean | Promise<boolean>",
        );
      }
      if (toolSet.names.length > 0) {
        const limits = resolveToolLimits(
          {
            ...this.toolConfig.limits,
            ...withoutUndefined({ maxToolCalls, maxConcurrentToolCalls, maxToolPayloadBytes }),
          },
          "options",
        );
        runner = createToolRunner({
          tools: toolSet,
          ...limits,
          approveToolCall: [this.toolConfig.approve, approveToolCall],
          signal: checked.options.signal,
        });
      }
    } catch (error) {
      const failed = failure(
        error instanceof SandboxError ? error.code : SANDBOX_CODES.INVALID_OPTIONS,
        withoutCode(error),
      );
      return { ...failed, calls: [] };
    }
    const span = startExecutionSpan(this.config.engine);
    // The engine is handed JavaScript: TypeScript is erased (and checked) here, before the transformer.
    const { language: _language, ...engineCore } = checked.options;
    const engineOptions: SandboxOptions =
      runner === undefined ? engineCore : { ...engineCore, hostCalls: runner };
    const typescript: TypeScriptPlan | undefined =
      language !== "typescript"
        ? undefined
        : {
            typecheck: typecheck ?? this.toolConfig.typecheck,
            declarations: () => this.declarationsFor(toolSet, context),
          };
    let result: SandboxResult;
    try {
      result = await inSpan(span, () => this.run(checked.code, context ?? {}, engineOptions, typescript));
    } finally {
      // Whatever ended the run (result, timeout, cancel, memory), pending calls are aborted and their answers dropped.
      runner?.abortAll("the execution ended");
      runner?.close();
    }
    const calls = runner === undefined ? [] : runner.journal();
    span.end(result.success ? undefined : result.errorCode, calls.length);
    const finished = this.finish(
      checked.code,
      result,
      started,
      checked.options.maxOutputSize ?? this.config.maxOutputSize,
      calls,
    );
    return { ...finished, calls };
  }

  toolDeclarations(): string {
    return toolDeclarations(this.toolConfig.tools);
  }

  /** What a TypeScript program is checked against: the run's tools, its context globals and the registered modules. */
  private declarationsFor(toolSet: NormalisedToolSet, context: Record<string, unknown> | undefined): string {
    const globals: Record<string, unknown> = {};
    // A source module's value is only known once it ran: `any` (a symbol reads as any).
    for (const mod of this.resolver.getRegisteredModules())
      globals[mod.name] = mod.source === undefined ? mod.exports : UNKNOWN_VALUE;
    Object.assign(globals, context ?? {});
    return `${toolDeclarations(toolSet)}\n${contextDeclarations(globals)}`;
  }

  /** The sandbox's typechecker: its worker (and the compiler) start on the first typecheck. */
  private getTypechecker(): Typechecker {
    this.typechecker ??= createTypechecker();
    return this.typechecker;
  }

  executeStream(
    code: string,
    context?: Record<string, unknown>,
    options: Omit<SandboxExecuteOptions, "onLog"> = {},
  ): AsyncIterable<SandboxStreamChunk> {
    return {
      [Symbol.asyncIterator]: () => {
        // One ResultStreamer per iteration, flushing every chunk at once so logs arrive while the guest runs.
        const streamer = new ResultStreamer({ maxBufferSize: 1 });
        const iterator = streamer[Symbol.asyncIterator]();
        // Leaving the loop early (break, return()) cancels the execution, combined with the caller's own signal.
        const controller = new AbortController();
        const signal =
          options.signal === undefined
            ? controller.signal
            : AbortSignal.any([options.signal, controller.signal]);
        const onLog = (entry: LogEntry) => {
          if (!streamer.closed) streamer.pushLog(entry.message, entry.level);
        };
        void this.execute(code, context, { ...options, signal, onLog }).then((result) => {
          if (!streamer.closed) streamer.complete(result);
        });
        return {
          next: () => iterator.next(),
          return: () => {
            controller.abort();
            streamer.destroy();
            return iterator.return?.() ?? Promise.resolve({ value: undefined, done: true });
          },
          [Symbol.asyncIterator]() {
            return this;
          },
        };
      },
    };
  }

  executeFunction(
    fn: (...args: never[]) => unknown,
    args: readonly unknown[] = [],
    options?: SandboxExecuteOptions,
  ): Promise<SandboxRunResult> {
    const { code, context } = functionCallSource(fn, args);
    // A live function's source is JavaScript, whatever the sandbox's language.
    return this.execute(code, context, { ...options, language: "javascript" });
  }

  registerModule(module: SandboxModule): void {
    this.assertAlive();
    // TypeScript source is erased once, here; the resolver and the engines keep JavaScript.
    this.resolver.register(stripModuleTypes(module));
  }

  unregisterModule(name: string): boolean {
    this.assertAlive();
    return this.resolver.unregister(name);
  }

  getAuditLog(): AuditEntry[] {
    return this.audit.getEntries();
  }

  getStatistics(): SandboxStatistics {
    return {
      ...this.audit.getStatistics(),
      engine: this.config.engine,
      totalExecutions: this.limiter.getTotalExecutions(),
      windowExecutions: this.limiter.getWindowExecutions(),
    };
  }

  async getCapabilities(): Promise<EngineCapabilities> {
    this.assertAlive();
    await this.getRunner();
    if (this.capabilities) return { ...this.capabilities };
    // A pool that has not created an engine yet: ask a short-lived one.
    const probe = (await this.loadFactory()).create(this.settings());
    try {
      this.capabilities = { ...probe.capabilities };
      return { ...this.capabilities };
    } finally {
      await probe.destroy();
    }
  }

  reset(): void {
    this.assertAlive();
    this.resolver.clear();
    this.audit.clear();
    this.limiter.reset();
  }

  destroy(): Promise<void> {
    // Every call, concurrent or later, waits for the same release.
    this.destroying ??= this.release();
    return this.destroying;
  }

  private async release(): Promise<void> {
    this.destroyed = true;
    const typechecker = this.typechecker;
    this.typechecker = undefined;
    await typechecker?.destroy();
    const runner = this.runner;
    this.runner = undefined;
    if (runner)
      await runner.then(
        (r) => r.destroy(),
        () => undefined,
      );
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private async run(
    source: string,
    context: Record<string, unknown>,
    options: SandboxOptions,
    typescript: TypeScriptPlan | undefined,
  ): Promise<RunOutcome> {
    if (this.destroyed)
      return failure(SANDBOX_CODES.ENGINE_DISPOSED, "This sandbox was destroyed; create a new one");
    let code = source;
    // Code length has one owner (this check) and one code, before anything parses the code.
    if (code.length > this.config.maxCodeLength) {
      return failure(
        SANDBOX_CODES.CODE_TOO_LONG,
        `code is ${code.length} characters, over maxCodeLength ${this.config.maxCodeLength}; split it or raise maxCodeLength`,
      );
    }
    try {
      this.limiter.checkRateLimit();
    } catch (error) {
      if (error instanceof SandboxError) return failure(error.code, withoutCode(error.message));
      throw error;
    }
    this.limiter.recordExecution();
    if (typescript !== undefined) {
      const stripped = stripTypes(code);
      if (!stripped.ok) return stripped.result;
      if (typescript.typecheck) {
        // The check has its own limit (the typechecker's 10 s): the execution's timeout is the guest's.
        const checked = await this.getTypechecker().check({ code, declarations: typescript.declarations() });
        if (!checked.ok) return checked.result;
        // The sandbox was destroyed while the compiler ran: nothing starts.
        if (this.destroyed)
          return failure(SANDBOX_CODES.ENGINE_DISPOSED, "This sandbox was destroyed; create a new one");
      }
      code = stripped.code;
    }
    // The transformer's parse is handed down to the engine (withPreparedCode): one parse per execution.
    // Code that does not parse goes on to the engine, which reports V8's SyntaxError with its line and column.
    const transformed = this.check(code);
    if (transformed.blocked) {
      const rule = transformed.blockedBy ?? "unknown-rule";
      recordRuleBlock(rule);
      return failure(
        SANDBOX_CODES.CODE_BLOCKED,
        `Code blocked by rule "${rule}": ${transformed.reason ?? "it uses a forbidden construct"}`,
      );
    }
    let runner: Runner;
    try {
      runner = await this.getRunner();
    } catch (error) {
      this.runner = undefined;
      const message = error instanceof Error ? error.message : String(error);
      const code = error instanceof SandboxError ? error.code : SANDBOX_CODES.ENGINE_UNAVAILABLE;
      return failure(code, withoutCode(message));
    }
    const prepared = transformed.prepared;
    return runner.execute(
      transformed.code,
      context,
      prepared === undefined ? options : withPreparedCode(options, prepared),
    );
  }

  /** The transformer's verdict on `code`, remembered for short code (see {@link verdicts}). */
  private check(code: string): TransformResult {
    if (code.length > MAX_CACHED_CODE_LENGTH) return this.transformer.transform(code);
    const kept = this.verdicts.get(code);
    if (kept !== undefined) return kept;
    const verdict = this.transformer.transform(code);
    const { prepared, ...withoutParse } = verdict;
    this.verdicts.set(
      code,
      code.length <= KEPT_PARSE_LENGTH || prepared === undefined ? verdict : withoutParse,
    );
    return verdict;
  }

  private finish(
    code: string,
    raw: RunOutcome,
    started: number,
    maxOutputSize: number,
    calls: readonly ToolCallRecord[],
  ): SandboxResult {
    const result: SandboxResult = { ...raw, duration: raw.duration || performance.now() - started };
    // The execution's own cap (options.maxOutputSize) wins over the config's.
    if (typeof result.result === "string") result.result = truncateOutput(result.result, maxOutputSize);
    // A guest can throw a message of any size; it is output like any other.
    if (typeof result.error === "string") result.error = truncateOutput(result.error, maxOutputSize);
    if (this.config.enableAudit) this.audit.log(code, result, this.config.engine, auditedCalls(calls));
    const outcome = executionOutcome(result);
    recordExecution(this.config.engine, outcome);
    recordDuration(this.config.engine, outcome, result.duration);
    return result;
  }

  private settings() {
    return {
      limits: {
        timeout: this.config.timeout,
        memoryLimit: this.config.memoryLimit,
        maxOutputSize: this.config.maxOutputSize,
      },
      options: this.config.engineOptions,
    };
  }

  private loadFactory(): Promise<EngineFactory> {
    this.factory ??= (async () => engineLoader(this.config.engine)())();
    return this.factory;
  }

  private getRunner(): Promise<Runner> {
    this.runner ??= this.createRunner();
    return this.runner;
  }

  private async createRunner(): Promise<Runner> {
    const factory = await this.loadFactory();
    const makeEngine = () => {
      const engine = factory.create(this.settings());
      this.capabilities ??= { ...engine.capabilities };
      return new ModuleSyncedEngine(engine, this.resolver);
    };
    const pool = this.config.pool;
    if (!pool) return makeEngine();
    return new SandboxPool({ ...pool, factory: makeEngine });
  }

  private assertAlive(): void {
    if (this.destroyed) {
      throw new SandboxError(SANDBOX_CODES.ENGINE_DISPOSED, "This sandbox was destroyed; create a new one.");
    }
  }
}

/**
 * Longest code whose parse a sandbox keeps with its verdict, in characters: what the engines'
 * straight-line proof reads (a parse kept for longer code would save one parse at many times
 * the code's size in memory).
 */
const KEPT_PARSE_LENGTH = 2_000;

/** A value {@link contextDeclarations} types as `any`. */
const UNKNOWN_VALUE = Symbol("unknown");

/** A result before the facade stamps its duration (failures decided before the engine ran have none). */
type RunOutcome = SandboxResult;

/** Run `fn` with the execution's span active, so tool-call spans (and the handlers' own) are its children. */
function inSpan<T>(span: ExecutionSpan, fn: () => Promise<T>): Promise<T> {
  return otelContext.with(span.context, fn);
}

/** What the audit log keeps of tool calls: names and outcomes, never inputs or outputs. */
function auditedCalls(calls: readonly ToolCallRecord[]): { tool: string; status: string }[] {
  return calls.map((call) => ({ tool: call.tool, status: call.status }));
}
