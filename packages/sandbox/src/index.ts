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
  GuestErrorInfo,
  LogEntry,
  LogLevel,
  SandboxConfig,
  SandboxEngine,
  SandboxFailure,
  SandboxLanguage,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
  SandboxSuccess,
  TypecheckDiagnostic,
} from "@suaveplan/sandbox-core/types";
// Host tools ("code mode")
export {
  type ApproveToolCall,
  defineTool,
  loadToolModule,
  type ToolApprovalRequest,
  ToolCallError,
  type ToolCallRecord,
  type ToolCallStatus,
  type ToolDefinition,
  type ToolExecutionOptions,
  type ToolLimits,
  type ToolSet,
  toolDeclarations,
} from "@suaveplan/sandbox-tools";
export {
  type CreateSandboxConfig,
  createSandbox,
  type EngineFactory,
  type EngineLoader,
  type EngineSettings,
  engineLoader,
  registerEngine,
  registeredEngines,
  type Sandbox,
  type SandboxExecuteOptions,
  type SandboxRunResult,
  type SandboxStatistics,
  type SandboxStreamChunk,
  type SandboxToolOptions,
  type SandboxTypecheckOptions,
  unregisterEngine,
} from "./sandbox/index.js";
