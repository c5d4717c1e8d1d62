// @suaveplan/sandbox-core: every feature is also its own subpath export (./audit-logger, ./pool, ...).

// Audit log
export {
  type AuditEntry,
  type AuditedResult,
  AuditLogger,
  type AuditLoggerOptions,
  type AuditSearch,
  type AuditStatistics,
  hashCode,
} from "./audit-logger/index.js";
// Environment
export { IDENTITY_ENV_KEYS, SENSITIVE_ENV_FRAGMENTS, sanitiseEnv } from "./env/index.js";
// Errors
export {
  type CodeRecord,
  defineCodes,
  type ErrorDetails,
  isSandboxError,
  isSuaveplanError,
  SANDBOX_CODES,
  type SandboxCode,
  SandboxError,
  SuaveplanError,
  type SuaveplanErrorJSON,
  type SuaveplanErrorOptions,
} from "./error-codes/index.js";
// Modules
export {
  BLOCKED_MODULES,
  BUILTIN_MODULE_NAMES,
  type BuiltinModuleName,
  ModuleResolver,
  RESERVED_MODULE_NAMES,
} from "./module-resolver/index.js";
// Pool
export { SandboxPool, type SandboxPoolOptions, type SandboxPoolStats } from "./pool/index.js";
// Render
export {
  type JsonValue,
  RENDER_DEFAULTS,
  type RenderedJson,
  type RenderedText,
  type RenderLimits,
  renderJson,
  renderText,
} from "./render/index.js";
// Resource limits
export {
  byteLength,
  LogCollector,
  ResourceLimiter,
  type ResourceLimiterOptions,
  truncateOutput,
  truncationSentinel,
} from "./resource-limiter/index.js";
// Streaming
export {
  type PushableChunk,
  ResultStreamer,
  type ResultStreamerOptions,
  type StreamChunk,
  type StreamCompleteChunk,
  type StreamErrorChunk,
  type StreamListener,
  type StreamLogChunk,
  type StreamResultChunk,
} from "./result-streamer/index.js";
// Schemas
export {
  describeZodError,
  parseEngineLimits,
  parseSandboxConfig,
  parseSandboxModule,
  parseSandboxOptions,
  SANDBOX_DEFAULTS,
  type SandboxConfigInput,
  SandboxConfigPartialSchema,
  SandboxModuleSchema,
  SandboxOptionsSchema,
  SandboxPoolConfigSchema,
  withoutUndefined,
} from "./schemas/index.js";
// Telemetry
export {
  type ExecutionAttributes,
  type ExecutionOutcome,
  type ExecutionSpan,
  executionOutcome,
  type PoolAcquisitionAttributes,
  type PoolAcquisitionResult,
  type RuleBlockAttributes,
  recordDuration,
  recordExecution,
  recordPoolAcquisition,
  recordRuleBlock,
  recordToolCall,
  recordToolCallDuration,
  SANDBOX_METER_NAME,
  SANDBOX_METRIC_NAMES,
  SANDBOX_SPAN_NAMES,
  SANDBOX_TRACER_NAME,
  sandboxExecutionDurationHistogram,
  sandboxExecutionsCounter,
  sandboxPoolAcquisitionsCounter,
  sandboxRuleBlocksCounter,
  sandboxToolCallDurationHistogram,
  sandboxToolCallsCounter,
  startExecutionSpan,
  startToolCallSpan,
  TOOL_CALL_SPAN_ATTRIBUTES,
  type ToolCallAttributes,
  type ToolCallOutcome,
  type ToolCallSpan,
  UNKNOWN_TOOL_ATTRIBUTE,
} from "./telemetry/index.js";
// Types
export {
  type BuiltinEngineName,
  type Clock,
  ENGINE_NAME_PATTERN,
  ENGINE_NAMES,
  type EngineCapabilities,
  type EngineLimits,
  type EngineName,
  failure,
  type GuestErrorInfo,
  type HostCalls,
  type LogEntry,
  type LogLevel,
  MAX_TIMER_MS,
  type MemoryAccounting,
  type MemoryKind,
  type MemoryLimitMode,
  type SandboxConfig,
  type SandboxEngine,
  type SandboxFailure,
  type SandboxLanguage,
  type SandboxModule,
  type SandboxOptions,
  type SandboxPoolConfig,
  type SandboxResult,
  type SandboxSuccess,
  type SandboxUsage,
  type TypecheckDiagnostic,
} from "./types/index.js";

// Code transformer: kept last, as its own export chunk.

export {
  type AnalysisFinding,
  BUILTIN_RULE_NAMES,
  type BuiltinRuleName,
  CodeTransformer,
  type CodeTransformerOptions,
  DEFAULT_MAX_CODE_LENGTH,
  type GuestSyntaxError,
  type ParsedGuestCode,
  type PreparedGuestCode,
  parseGuestCode,
  prepareGuestCode,
  type RuleFinding,
  type RuleInput,
  type TransformResult,
  type TransformRule,
} from "./code-transformer/index.js";
