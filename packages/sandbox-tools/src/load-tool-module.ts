import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import type { ToolSet } from "./tool-definition.js";

/**
 * Import a tools module — an ES module whose default export is an object of
 * tool definitions by name (the AI SDK's `tool()` shape) — the way the CLI's
 * `run --tools` and the MCP server's `tools` setting name one. The tools are
 * not validated here: `createSandbox({ tools })` does that, naming the tool.
 * @param path - the module's path, absolute or relative to `baseDir`.
 * @param baseDir - the directory a relative `path` is resolved against (absolute).
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) when the module cannot be
 *   imported or its default export is not an object.
 */
export async function loadToolModule(path: string, baseDir: string): Promise<ToolSet> {
  if (typeof path !== "string" || path === "" || path.includes("\0")) {
    throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, "tools module: the path must be a non-empty string");
  }
  const file = isAbsolute(path) ? path : resolve(baseDir, path);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `cannot import the tools module ${JSON.stringify(path)}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const tools = loaded.default;
  if (tools === null || typeof tools !== "object" || Array.isArray(tools)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `the tools module ${JSON.stringify(path)} must default-export an object of tools by name`,
    );
  }
  return tools as ToolSet;
}
