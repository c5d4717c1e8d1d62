// Host tools ("code mode"): the layer between the facade and the guest→host call protocol.

// Validation messages (`input.city: expected string, received number`), for other tool hosts
export { describeIssues } from "./internal/describe-issues.js";
// Loading a tools module (the CLI's `--tools`, the MCP server's `tools`)
export { loadToolModule } from "./load-tool-module.js";
// Normalising and merging
export {
  type CompiledToolSchema,
  isNormalisedToolSet,
  mergeTools,
  NO_TOOLS,
  type NormalisedTool,
  type NormalisedToolSet,
  normaliseTools,
} from "./normalise-tools.js";
// Running calls
export { ToolCallError, type ToolCallErrorInfo } from "./tool-call-error.js";
// Declarations
export { toolDeclarations } from "./tool-declarations.js";
// Definitions
export {
  defineTool,
  type JsonSchemaObject,
  type NeedsApprovalFunction,
  type SchemaOutput,
  type StandardSchemaLike,
  type ToolDefinition,
  type ToolExecutionOptions,
  type ToolSchema,
  type ToolSet,
} from "./tool-definition.js";
// Limits
export {
  type ResolvedToolLimits,
  resolveToolLimits,
  TOOL_LIMIT_DEFAULTS,
  type ToolLimits,
  ToolLimitsSchema,
  type ToolsLocation,
} from "./tool-limits.js";
export {
  type ApproveToolCall,
  createToolRunner,
  TOOL_INPUT_TOO_LARGE,
  type ToolApprovalRequest,
  type ToolCallRecord,
  type ToolCallStatus,
  type ToolGateRefusal,
  type ToolRunner,
  type ToolRunnerOptions,
  type ToolUsage,
} from "./tool-runner.js";
