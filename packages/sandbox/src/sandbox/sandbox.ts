import { type AuditEntry, AuditLogger, type AuditStatistics } from "@suaveplan/sandbox-core/audit-logger";
import { CodeTransformer } from "@suaveplan/sandbox-core/code-transformer";
import { SANDBOX_CODES, type SandboxCode, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { ModuleResolver } from "@suaveplan/sandbox-core/module-resolver";
import { SandboxPool } from "@suaveplan/sandbox-core/pool";
import { ResourceLimiter, truncateOutput } from "@suaveplan/sandbox-core/resource-limiter";
import {
  parseSandboxConfig,
  parseSandboxOptions,
  type SandboxConfigInput,
} from "@suaveplan/sandbox-core/schemas";
import {
  executionOutcome,
  recordDuration,
  recordExecution,
  recordRuleBlock,
} from "@suaveplan/sandbox-core/telemetry";
import type {
  EngineCapabilities,
  EngineName,
  SandboxConfig,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { type EngineConstructor, loadEngine } from "./engine-loader.js";
import { functionCallSource } from "./function-source.js";
import { ModuleSyncedEngine } from "./module-synced-engine.js";
import { type SandboxStreamChunk, streamExecution } from "./stream-execution.js";

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
  /** Run `code`; resolves a result for every guest failure, rejects only for invalid arguments. */
  execute(code: string, context?: Record<string, unknown>, options?: SandboxOptions): Promise<SandboxResult>;
  /** Run `code`, yielding console lines as they happen and the result last. */
  executeStream(
    code: string,
    context?: Record<string, unknown>,
    options?: Omit<SandboxOptions, "onLog">,
  ): AsyncIterable<SandboxStreamChunk>;
  /** Call `fn` inside the sandbox with JSON-safe `args`; `fn` is sent as source, not as a live function. */
  executeFunction(
    fn: (...args: never[]) => unknown,
    args?: readonly unknown[],
    options?: SandboxOptions,
  ): Promise<SandboxResult>;
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
export function createSandbox(config: SandboxConfigInput = {}): Sandbox {
  return new SandboxFacade(parseSandboxConfig(config));
}

type Runner = Pick<SandboxEngine, "execute" | "destroy">;

class SandboxFacade implements Sandbox {
  readonly config: Readonly<SandboxConfig>;
  private readonly audit: AuditLogger;
  private readonly limiter: ResourceLimiter;
  private readonly resolver: ModuleResolver;
  private readonly transformer: CodeTransformer;
  private runner: Promise<Runner> | undefined;
  private engineClass: Promise<EngineConstructor> | undefined;
  private destroyed = false;
  private destroying: Promise<void> | undefined;
  private capabilities: EngineCapabilities | undefined;

  constructor(config: SandboxConfig) {
    this.config = Object.freeze({ ...config });
    this.audit = new AuditLogger();
    this.limiter = new ResourceLimiter({
      maxExecutionsPerWindow: config.maxExecutionsPerWindow,
      rateLimitWindow: config.rateLimitWindow,
      maxOutputSize: config.maxOutputSize,
    });
    this.resolver = new ModuleResolver(config.allowedModules);
    this.transformer = new CodeTransformer({ maxCodeLength: config.maxCodeLength });
  }

  async execute(
    code: string,
    context?: Record<string, unknown>,
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    assertCode(code);
    assertContext(context);
    const parsed = parseSandboxOptions(options ?? {});
    const started = performance.now();
    const result = await this.run(code, context ?? {}, parsed);
    return this.finish(code, result, started, parsed.maxOutputSize ?? this.config.maxOutputSize);
  }

  executeStream(
    code: string,
    context?: Record<string, unknown>,
    options: Omit<SandboxOptions, "onLog"> = {},
  ): AsyncIterable<SandboxStreamChunk> {
    assertCode(code);
    assertContext(context);
    return streamExecution((onLog) => this.execute(code, context, { ...options, onLog }));
  }

  executeFunction(
    fn: (...args: never[]) => unknown,
    args: readonly unknown[] = [],
    options?: SandboxOptions,
  ): Promise<SandboxResult> {
    const { code, context } = functionCallSource(fn, args);
    return this.execute(code, context, options);
  }

  registerModule(module: SandboxModule): void {
    this.assertAlive();
    this.resolver.register(module);
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
    const Engine = await this.loadEngineClass();
    const probe = new Engine(this.limits());
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
    code: string,
    context: Record<string, unknown>,
    options: SandboxOptions,
  ): Promise<RunOutcome> {
    if (this.destroyed)
      return failure(SANDBOX_CODES.ENGINE_DISPOSED, "This sandbox was destroyed; create a new one.");
    if (code.length > this.config.maxCodeLength) {
      return failure(
        SANDBOX_CODES.CODE_TOO_LONG,
        `code is ${code.length} characters, over maxCodeLength ${this.config.maxCodeLength}; split it or raise maxCodeLength.`,
      );
    }
    try {
      this.limiter.checkRateLimit();
    } catch (error) {
      if (error instanceof SandboxError) return failure(error.code, error.message);
      throw error;
    }
    this.limiter.recordExecution();
    const transformed = this.transformer.transform(code);
    if (transformed.syntaxError) {
      return failure(SANDBOX_CODES.ENGINE_FAILED, transformed.syntaxError.message);
    }
    if (transformed.blocked) {
      const rule = transformed.blockedBy ?? "unknown-rule";
      recordRuleBlock(rule);
      return failure(
        SANDBOX_CODES.CODE_BLOCKED,
        `Code blocked by rule "${rule}": ${transformed.reason ?? "it uses a forbidden construct"}.`,
      );
    }
    let runner: Runner;
    try {
      runner = await this.getRunner();
    } catch (error) {
      this.runner = undefined;
      const message = error instanceof Error ? error.message : String(error);
      const code = error instanceof SandboxError ? error.code : SANDBOX_CODES.ENGINE_FAILED;
      return failure(code, message);
    }
    return runner.execute(transformed.code, context, options);
  }

  private finish(code: string, raw: RunOutcome, started: number, maxOutputSize: number): SandboxResult {
    const result: SandboxResult = { ...raw, duration: raw.duration ?? performance.now() - started };
    // The execution's own cap (options.maxOutputSize) wins over the config's.
    if (typeof result.result === "string") result.result = truncateOutput(result.result, maxOutputSize);
    // A guest can throw a message of any size; it is output like any other.
    if (typeof result.error === "string") result.error = truncateOutput(result.error, maxOutputSize);
    if (this.config.enableAudit) this.audit.log(code, result, this.config.engine);
    const outcome = executionOutcome(result);
    recordExecution(this.config.engine, outcome);
    recordDuration(this.config.engine, outcome, result.duration);
    return result;
  }

  private limits() {
    return {
      timeout: this.config.timeout,
      memoryLimit: this.config.memoryLimit,
      maxOutputSize: this.config.maxOutputSize,
    };
  }

  private loadEngineClass(): Promise<EngineConstructor> {
    this.engineClass ??= loadEngine(this.config.engine);
    return this.engineClass;
  }

  private getRunner(): Promise<Runner> {
    this.runner ??= this.createRunner();
    return this.runner;
  }

  private async createRunner(): Promise<Runner> {
    const Engine = await this.loadEngineClass();
    const makeEngine = () => {
      const engine = new Engine(this.limits());
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

/** A result before the facade stamps its duration (failures decided before the engine ran have none). */
type RunOutcome = Omit<SandboxResult, "duration"> & { duration?: number };

function failure(errorCode: SandboxCode, error: string): RunOutcome {
  return { success: false, error, errorCode, logs: [] };
}

function assertCode(code: unknown): asserts code is string {
  if (typeof code !== "string") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      `Invalid execution input: code: expected a string of JavaScript, got ${code === null ? "null" : typeof code}.`,
    );
  }
}

function assertContext(context: unknown): asserts context is Record<string, unknown> | undefined {
  if (context === undefined) return;
  const proto = context === null || typeof context !== "object" ? undefined : Object.getPrototypeOf(context);
  if (proto !== Object.prototype && proto !== null) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_OPTIONS,
      "Invalid execution input: context: expected a plain object whose keys become globals.",
    );
  }
}
