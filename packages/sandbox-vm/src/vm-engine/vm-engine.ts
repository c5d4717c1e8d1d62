import { Script } from "node:vm";
import { CodeTransformer } from "@suaveplan/sandbox-core/code-transformer";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { toGuestScript } from "@suaveplan/sandbox-core/guest-script";
import { parseSandboxConfig, parseSandboxModule, parseSandboxOptions } from "@suaveplan/sandbox-core/schemas";
import type {
  EngineCapabilities,
  EngineLimits,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { GUEST_FILENAME, MODULE_FILENAME_PREFIX, moduleScriptSource } from "../internal/guest-runtime.js";
import { encodeHostValue, NotTransferableError } from "../internal/host-transfer.js";
import { LruCache } from "../internal/script-cache.js";
import { isStraightLine } from "../internal/straight-line.js";
import { type ExecutionPlan, failure, VmExecution } from "../internal/vm-execution.js";

/** What the vm engine guarantees — and what it does not. */
export const VM_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: false,
  tier: "node:vm context in the host process: NOT a security boundary — defence in depth only",
  enforcesMemoryLimit: false,
  boundsAsyncWork: true,
  streamsLogs: true,
});

/** Options of {@link VmEngine}; every field is optional. */
export type VmEngineOptions = Partial<EngineLimits>;

/** Code that may use top-level `await` or `return` (checked properly by `toGuestScript`). */
const MAY_NEED_WRAPPING = /await|return/;

/** Compiled user scripts kept per engine (by exact source text). */
const SCRIPT_CACHE_SIZE = 64;

type PreparedModule = { name: string; json: string } | { name: string; script: Script };

/** A compiled user script and whether it is a provably bounded pure expression. */
interface CompiledCode {
  script: Script;
  straightLine: boolean;
}

/**
 * Runs guest JavaScript in a fresh `node:vm` context per execution.
 *
 * - The code is a script; its completion value is the result (a returned
 *   promise is awaited). Top-level `await` and `return` work as in an async
 *   function body (see `toGuestScript`). Results and context values cross by structured
 *   copy as JSON-compatible data; no host object is reachable from guest code.
 * - `timeout` (ms) bounds sync loops, microtask loops, pending timers and
 *   never-settling promises (`microtaskMode: "afterEvaluate"`).
 * - String code generation and WebAssembly are disabled in the context;
 *   dynamic `import()` is refused before running (in node:vm its rejection
 *   would carry a host-realm error, a known route to the host).
 * - `memoryLimit` is accepted but NOT enforced: node:vm shares the host's
 *   heap and cannot bound it (`capabilities.enforcesMemoryLimit` is false).
 *
 * node:vm is NOT a security boundary: treat this engine as defence in depth
 * for code you mostly trust. Use the isolate engine (or a confined spawn
 * engine) for hostile code.
 *
 * @example
 * const engine = new VmEngine({ timeout: 5000, maxOutputSize: 1024 });
 * const { result } = await engine.execute("2 + 3"); // 5
 * await engine.destroy();
 */
export class VmEngine implements SandboxEngine, AsyncDisposable {
  /** Always `"vm"`. */
  readonly name = "vm" as const;
  /** See {@link VM_CAPABILITIES}. */
  readonly capabilities: EngineCapabilities = VM_CAPABILITIES;
  /** The limits every execution starts from (per-execution options override them). */
  readonly limits: Readonly<EngineLimits>;
  private readonly modules = new Map<string, PreparedModule>();
  private modulesJson: string | undefined;
  private readonly scripts = new LruCache<string, CompiledCode>(SCRIPT_CACHE_SIZE);
  private readonly live = new Set<VmExecution>();
  private destroyed = false;
  private importGuard: CodeTransformer | undefined;

  /**
   * @param options - `timeout` (ms, default 5000), `maxOutputSize` (bytes,
   * default 1 MiB), `memoryLimit` (bytes; accepted, not enforced).
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when a limit is not a positive integer.
   */
  constructor(options: VmEngineOptions = {}) {
    const { timeout, memoryLimit, maxOutputSize } = options;
    const config = parseSandboxConfig(
      Object.fromEntries(
        Object.entries({ timeout, memoryLimit, maxOutputSize }).filter(([, value]) => value !== undefined),
      ),
    );
    this.limits = Object.freeze({
      timeout: config.timeout,
      memoryLimit: config.memoryLimit,
      maxOutputSize: config.maxOutputSize,
    });
  }

  /**
   * Run `code` in a fresh context. Resolves a result for every guest failure
   * (`SANDBOX_TIMEOUT`, `SANDBOX_ENGINE_FAILED`, `SANDBOX_CODE_BLOCKED` for
   * `import()`, `SANDBOX_INVALID_OPTIONS`) and, after {@link destroy},
   * `SANDBOX_ENGINE_DISPOSED`. Never rejects.
   */
  async execute(
    code: string,
    context: Record<string, unknown> = {},
    options: SandboxOptions = {},
  ): Promise<SandboxResult> {
    if (this.destroyed) return disposed();
    let execution: VmExecution | undefined;
    try {
      const plan = this.plan(code, context, options);
      if (!("script" in plan)) return plan;
      execution = new VmExecution(plan, (ended) => this.live.delete(ended));
      this.live.add(execution);
      return await execution.start();
    } catch (error) {
      // Only the host can fail here (e.g. out of memory creating a context); never reject.
      const text = `VmEngine could not run the code: ${error instanceof Error ? error.message : String(error)}`;
      execution?.abort(SANDBOX_CODES.ENGINE_FAILED, text);
      return failure(SANDBOX_CODES.ENGINE_FAILED, text);
    }
  }

  /**
   * Make a module available to later executions as a global named
   * `module.name`: `exports` (plain data, copied in) or `source` (guest
   * JavaScript assigning `module.exports`, evaluated inside each execution;
   * wins over `exports` when both are given). Replaces a module of the same name.
   * @throws SandboxError `SANDBOX_INVALID_MODULE` (bad name, non-transferable
   * exports, source that does not compile) or `SANDBOX_ENGINE_DISPOSED`.
   */
  registerModule(module: SandboxModule): void {
    this.assertUsable("registerModule");
    const parsed = parseSandboxModule(module);
    let prepared: PreparedModule;
    if (parsed.source !== undefined) {
      prepared = { name: parsed.name, script: this.compileModule(parsed.name, parsed.source) };
    } else {
      let json: string | undefined;
      try {
        json = encodeHostValue(parsed.exports, `module ${parsed.name} exports`);
      } catch (error) {
        throw new SandboxError(
          SANDBOX_CODES.INVALID_MODULE,
          `${error instanceof Error ? error.message : String(error)}; module exports must be JSON-compatible data`,
          { cause: error },
        );
      }
      prepared = { name: parsed.name, json: json ?? "null" };
    }
    this.modules.delete(parsed.name);
    this.modules.set(parsed.name, prepared);
    this.modulesJson = undefined;
  }

  /** Remove a module; true when it was registered. */
  unregisterModule(name: string): boolean {
    const removed = this.modules.delete(name);
    if (removed) this.modulesJson = undefined;
    return removed;
  }

  /** Drop every registered module and the compiled-script cache. */
  reset(): void {
    this.modules.clear();
    this.modulesJson = undefined;
    this.scripts.clear();
  }

  /**
   * End running executions (they resolve `SANDBOX_ENGINE_DISPOSED`), clear
   * their timers and drop all state. Idempotent.
   */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const execution of [...this.live]) {
      execution.abort(SANDBOX_CODES.ENGINE_DISPOSED, "VmEngine was destroyed while the code ran");
    }
    this.live.clear();
    this.reset();
  }

  /** Same as {@link destroy}, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  private plan(
    code: string,
    context: Record<string, unknown>,
    options: SandboxOptions,
  ): ExecutionPlan | SandboxResult {
    let resolved: SandboxOptions = options;
    if (options === null || typeof options !== "object" || Object.keys(options).length > 0) {
      try {
        resolved = parseSandboxOptions(options);
      } catch (error) {
        return failure(SANDBOX_CODES.INVALID_OPTIONS, withoutCode(error));
      }
    }
    if (typeof code !== "string") {
      return failure(SANDBOX_CODES.INVALID_OPTIONS, `code must be a string (got ${typeof code})`);
    }
    const contextJson = encodeContext(context);
    if (typeof contextJson !== "string") return contextJson;
    const compiled = this.compile(code);
    if (!("straightLine" in compiled)) return compiled;
    const sourceModules: Script[] = [];
    for (const prepared of this.modules.values()) {
      if ("script" in prepared) sourceModules.push(prepared.script);
    }
    return {
      script: compiled.script,
      // A getter from a source module could run user code even in a pure expression.
      watchdog: !compiled.straightLine || sourceModules.length > 0,
      contextJson,
      modulesJson: this.dataModulesJson(),
      sourceModules,
      timeoutMs: resolved.timeout ?? this.limits.timeout,
      maxOutputSize: resolved.maxOutputSize ?? this.limits.maxOutputSize,
      onLog: resolved.onLog,
    };
  }

  private compile(code: string): CompiledCode | SandboxResult {
    const cached = this.scripts.get(code);
    if (cached) return cached;
    // Top-level await/return: wrapped like every engine does (toGuestScript parses only when it may be needed).
    const source = MAY_NEED_WRAPPING.test(code) ? toGuestScript(code).source : code;
    let script: Script;
    try {
      script = new Script(source, { filename: GUEST_FILENAME });
    } catch (error) {
      return failure(SANDBOX_CODES.ENGINE_FAILED, describeSyntaxError(error));
    }
    const refusal = this.refuseImport(source);
    if (refusal !== undefined) return failure(SANDBOX_CODES.CODE_BLOCKED, refusal);
    const compiled = { script, straightLine: isStraightLine(source) };
    this.scripts.set(code, compiled);
    return compiled;
  }

  private compileModule(name: string, source: string): Script {
    const refusal = this.refuseImport(source);
    if (refusal !== undefined) {
      throw new SandboxError(SANDBOX_CODES.INVALID_MODULE, `module ${name}: ${refusal}`);
    }
    try {
      return new Script(moduleScriptSource(name, source), {
        filename: `${MODULE_FILENAME_PREFIX}${name}.js`,
      });
    } catch (error) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_MODULE,
        `module ${name} does not compile: ${describeSyntaxError(error)}`,
      );
    }
  }

  /**
   * In node:vm a dynamic `import()` rejects with a host-realm error whose
   * constructor chain reaches the host's `Function` — a known escape. Refuse
   * it before running: `import` cannot be spelled with escapes, so code
   * without the word never needs a parse.
   */
  private refuseImport(code: string): string | undefined {
    if (!code.includes("import")) return undefined;
    this.importGuard ??= new CodeTransformer({
      builtins: ["block-import-dynamic"],
      maxCodeLength: Number.MAX_SAFE_INTEGER,
    });
    const checked = this.importGuard.transform(code);
    if (checked.blocked) {
      return `${checked.reason ?? "import"} is not available in the vm engine (node:vm would hand the code a host object)`;
    }
    if (checked.syntaxError !== undefined) {
      return "the code mentions `import` and could not be verified free of dynamic import() by the parser";
    }
    return undefined;
  }

  private dataModulesJson(): string {
    if (this.modulesJson === undefined) {
      const entries: string[] = [];
      for (const prepared of this.modules.values()) {
        if ("json" in prepared) entries.push(`[${JSON.stringify(prepared.name)},${prepared.json}]`);
      }
      this.modulesJson = entries.length === 0 ? "" : `[${entries.join(",")}]`;
    }
    return this.modulesJson;
  }

  private assertUsable(what: string): void {
    if (this.destroyed) {
      throw new SandboxError(
        SANDBOX_CODES.ENGINE_DISPOSED,
        `VmEngine.${what}: the engine was destroyed; create a new VmEngine`,
      );
    }
  }
}

function disposed(): SandboxResult {
  return failure(SANDBOX_CODES.ENGINE_DISPOSED, "VmEngine was destroyed; create a new VmEngine to run code");
}

function encodeContext(context: unknown): string | SandboxResult {
  if (context === undefined || context === null) return "";
  if (typeof context !== "object" || Array.isArray(context)) {
    return failure(
      SANDBOX_CODES.INVALID_OPTIONS,
      "context must be a plain object of values to copy in as globals",
    );
  }
  if (Object.keys(context).length === 0) return "";
  try {
    return encodeHostValue(context, "context") ?? "";
  } catch (error) {
    if (error instanceof NotTransferableError) {
      return failure(
        SANDBOX_CODES.INVALID_OPTIONS,
        `${error.message}; context values must be JSON-compatible data`,
      );
    }
    return failure(SANDBOX_CODES.INVALID_OPTIONS, `context could not be copied: ${withoutCode(error)}`);
  }
}

/** `SyntaxError: Unexpected token '=' at line 3`, from a compile error (no host frames). */
function describeSyntaxError(error: unknown): string {
  if (!(error instanceof Error)) return `SyntaxError: ${String(error)}`;
  const where = /^[^\n]*:(\d+)\n/.exec(error.stack ?? "");
  return `${error.name}: ${error.message}${where ? ` at line ${where[1]}` : ""}`;
}

function withoutCode(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/ \(SANDBOX_[A-Z_]+\)$/, "");
}
