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
// Resource limits
export { byteLength, LogCollector, truncateOutput, truncationSentinel } from "./resource-limiter/index.js";
// Schemas
export {
  describeZodError,
  parseSandboxConfig,
  parseSandboxModule,
  parseSandboxOptions,
  SANDBOX_DEFAULTS,
  type SandboxConfigInput,
  SandboxConfigPartialSchema,
  SandboxModuleSchema,
  SandboxOptionsSchema,
  SandboxPoolConfigSchema,
} from "./schemas/index.js";
// Types
export {
  type Clock,
  ENGINE_NAMES,
  type EngineCapabilities,
  type EngineLimits,
  type EngineName,
  type LogEntry,
  type LogLevel,
  type SandboxConfig,
  type SandboxEngine,
  type SandboxModule,
  type SandboxOptions,
  type SandboxPoolConfig,
  type SandboxResult,
} from "./types/index.js";
