import { isSuaveplanError } from "@suaveplan/sandbox-core/error-codes";
import {
  checkMcpSettings,
  readMcpConfig,
  resolveMcpConfig,
  type SandboxMcpSettings,
  serveStdio,
  startHttpServer,
} from "@suaveplan/sandbox-mcp";
import type { CliIo } from "../cli/cli-io.js";
import { EXIT_CODES, type ExitCode } from "../cli/exit-codes.js";
import { UsageError } from "../cli/usage-error.js";

/** Options of `suaveplan-sandbox mcp`. */
export interface McpOptions {
  /** `--config FILE`: the JSON config (relative paths in it are relative to the file). */
  config: string | undefined;
  /** `--http PORT`: serve Streamable HTTP on 127.0.0.1:PORT instead of stdio (token from `SUAVEPLAN_MCP_TOKEN`). */
  http?: number | undefined;
}

/** The environment variable `--http` takes its bearer token from. */
export const MCP_TOKEN_ENV = "SUAVEPLAN_MCP_TOKEN";

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
    // What the settings name must exist now, not when the model first runs a command.
    checkMcpSettings(settings);
  } catch (error) {
    if (isSuaveplanError(error)) throw new UsageError(`--config: ${error.message}`);
    throw error;
  }
  const env = io.env ?? process.env;
  if (options.http !== undefined) return serveHttp(settings, options.http, env, io);
  const stop = new AbortController();
  const unregister = io.onStop?.(() => stop.abort());
  try {
    await serveStdio(settings, { signal: stop.signal, env });
  } catch (error) {
    if (isSuaveplanError(error, "SANDBOX_INVALID_CONFIG")) throw new UsageError(error.message);
    throw error;
  } finally {
    unregister?.();
  }
  return EXIT_CODES.ok;
}

async function serveHttp(
  settings: SandboxMcpSettings,
  port: number,
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<ExitCode> {
  const token = env[MCP_TOKEN_ENV];
  if (token === undefined || token.length < 16) {
    throw new UsageError(`--http needs a bearer token of at least 16 characters in ${MCP_TOKEN_ENV}`);
  }
  let http: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    http = await startHttpServer(settings, { port, token, env });
  } catch (error) {
    if (isSuaveplanError(error)) throw new UsageError(`--http: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      throw new UsageError(`--http: port ${port} on 127.0.0.1 is in use`);
    }
    throw error;
  }
  io.stderr(
    `suaveplan-sandbox mcp: Streamable HTTP on ${http.url} (send Authorization: Bearer $${MCP_TOKEN_ENV})\n`,
  );
  await new Promise<void>((resolve) => {
    const unregister = io.onStop?.(() => {
      unregister?.();
      resolve();
    });
    if (unregister === undefined) resolve();
  });
  await http.close();
  return EXIT_CODES.ok;
}
