// The config file: schema, resolution, reading
export {
  checkMcpSettings,
  MCP_TOOL_NAMES,
  type McpToolName,
  type ResolveConfigOptions,
  readMcpConfig,
  resolveMcpConfig,
  type SandboxMcpConfig,
  SandboxMcpConfigSchema,
  type SandboxMcpSettings,
  SHELL_ENV_PASSED,
} from "./config/mcp-config.js";
// The server
export {
  createSandboxMcpServer,
  type SandboxMcpServer,
  type SandboxMcpServerOptions,
} from "./server/sandbox-mcp-server.js";
export { type HttpServerOptions, type SandboxMcpHttpServer, startHttpServer } from "./server/serve-http.js";
export { type StdioStreams, serveStdio } from "./server/serve-stdio.js";
