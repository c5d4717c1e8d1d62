// The facade

// Errors
export {
  defineCodes,
  isSandboxError,
  isSuaveplanError,
  SANDBOX_CODES,
  type SandboxCode,
  SandboxError,
  SuaveplanError,
} from "@suaveplan/sandbox-core/error-codes";
// Schemas
export {
  type SandboxConfigInput,
  SandboxConfigPartialSchema,
  SandboxModuleSchema,
  SandboxOptionsSchema,
} from "@suaveplan/sandbox-core/schemas";
// Types
export type {
  Clock,
  EngineCapabilities,
  EngineName,
  LogEntry,
  LogLevel,
  SandboxConfig,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
export {
  createSandbox,
  type Sandbox,
  type SandboxStatistics,
  type SandboxStreamChunk,
} from "./sandbox/index.js";
