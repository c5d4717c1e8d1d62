import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { SandboxMcpSettings } from "../config/mcp-config.js";
import { createSandboxMcpServer, type SandboxMcpServerOptions } from "./sandbox-mcp-server.js";

/** Streams {@link serveStdio} talks over (default: this process's). */
export interface StdioStreams {
  stdin?: NodeJS.ReadableStream & { pause(): unknown };
  stdout?: NodeJS.WritableStream;
}

/**
 * Serve the sandbox MCP server over stdio until the client closes standard
 * input (or `signal` aborts); then close it and release every sandbox
 * resource. Nothing but protocol messages is written to `stdout`.
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) when the tools module cannot be loaded.
 */
export async function serveStdio(
  settings: SandboxMcpSettings,
  options: SandboxMcpServerOptions & StdioStreams & { signal?: AbortSignal } = {},
): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const mcp = await createSandboxMcpServer(settings, options);
  const transport = new StdioServerTransport(stdin as typeof process.stdin, stdout as typeof process.stdout);
  const ended = new Promise<void>((resolve) => {
    stdin.once("end", resolve);
    stdin.once("close", resolve);
    transport.onclose = resolve;
    if (options.signal?.aborted) resolve();
    options.signal?.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    await mcp.connect(transport);
    await ended;
  } finally {
    await mcp.close();
  }
}
