import { isSuaveplanError } from "@suaveplan/sandbox-core/error-codes";
import { readMcpConfig, resolveMcpConfig, type SandboxMcpSettings, serveStdio } from "@suaveplan/sandbox-mcp";
import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES, type ExitCode } from "../cli/exit-codes.js";
import { UsageError } from "../cli/usage-error.js";

/** Options of `suaveplan-sandbox mcp`. */
export interface McpOptions {
  /** `--config FILE`: the JSON config (relative paths in it are relative to the file). */
  config: string | undefined;
}

/**
 * `suaveplan-sandbox mcp`: serve the sandbox MCP server on stdin/stdout until
 * the client closes stdin (or SIGINT/SIGTERM); diagnostics go to stderr only.
 * @throws UsageError for a config file or tools module that cannot be used.
 */
export async function mcpCommand(options: McpOptions, io: CliIo): Promise<ExitCode> {
  let settings: SandboxMcpSettings;
  try {
    settings =
      options.config === undefined
        ? resolveMcpConfig({}, { baseDir: io.cwd, cwd: io.cwd })
        : readMcpConfig(options.config, io.cwd);
  } catch (error) {
    if (isSuaveplanError(error)) throw new UsageError(`--config: ${error.message}`);
    throw error;
  }
  const stop = new AbortController();
  const unregister = io.onStop?.(() => stop.abort());
  try {
    await serveStdio(settings, { signal: stop.signal, ...(io.env === undefined ? {} : { env: io.env }) });
  } catch (error) {
    if (isSuaveplanError(error, "SANDBOX_INVALID_CONFIG")) throw new UsageError(error.message);
    throw error;
  } finally {
    unregister?.();
  }
  return EXIT_CODES.ok;
}
