// The server in process, over the SDK's in-memory transport: what the stdio suite (sandbox-cli) does not cover.
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveMcpConfig, type SandboxMcpConfig } from "../src/config/mcp-config.js";
import { createSandboxMcpServer, type SandboxMcpServer } from "../src/server/sandbox-mcp-server.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-mcp-server-")));
const workspace = join(scratch, "ws");
mkdirSync(workspace);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const hasCurl = readdirSync("/usr/bin").includes("curl");

async function connected(
  config: SandboxMcpConfig,
  options: Parameters<typeof createSandboxMcpServer>[1] = {},
): Promise<{ client: Client; mcp: SandboxMcpServer }> {
  const mcp = await createSandboxMcpServer(
    resolveMcpConfig(config, { baseDir: scratch, cwd: workspace }),
    options,
  );
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(serverSide);
  const client = new Client({ name: "test", version: "0.0.0" });
  await client.connect(clientSide);
  return { client, mcp };
}

describe("createSandboxMcpServer", () => {
  it("lists only the enabled tools; tools given in code are callable", async () => {
    const { client, mcp } = await connected(
      { engine: "vm", enabledTools: ["run_javascript"] },
      {
        tools: {
          double: {
            inputSchema: z.object({ n: z.number() }),
            execute: async ({ n }: { n: number }) => n * 2,
          },
        },
      },
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["run_javascript"]);
      const result = (await client.callTool({
        name: "run_javascript",
        arguments: { code: "await tools.double({ n: 21 })" },
      })) as CallToolResult;
      expect(result.structuredContent).toMatchObject({ success: true, result: 42 });
      const values = (await client.callTool({
        name: "run_javascript",
        arguments: {
          code: "({ big: 5n, map: new Map([[1, 2]]), inf: -Infinity, when: new Date(0), gone: undefined })",
        },
      })) as CallToolResult;
      // structuredContent is JSON: what JSON cannot carry becomes text.
      expect((values.structuredContent as { result: unknown }).result).toEqual({
        big: "5n",
        map: "Map(1) { 1 => 2 }",
        inf: "-Infinity",
        when: "1970-01-01T00:00:00.000Z",
      });
    } finally {
      await client.close();
      await mcp.close();
      await mcp.close(); // idempotent
    }
  });

  it("a cwd outside the workspace is an isError result naming the option; nothing runs", async () => {
    const { client, mcp } = await connected({ engine: "vm", enabledTools: ["run_command"] });
    try {
      const result = (await client.callTool({
        name: "run_command",
        arguments: { command: "touch escaped", cwd: scratch },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({
        outcome: "failed",
        exitCode: null,
        detail: expect.stringMatching(/^SANDBOX_INVALID_OPTIONS: runConfinedBash: options\.cwd/),
      });
      expect(readdirSync(scratch).sort()).toEqual(["ws"]);
    } finally {
      await client.close();
      await mcp.close();
    }
  });

  it.skipIf(!hasCurl)(
    "a host off the network allow-list is denied, and the denial names that policy",
    async () => {
      const { client, mcp } = await connected({
        engine: "vm",
        enabledTools: ["run_command"],
        shell: { network: { allow: ["allowed.test"] } },
      });
      try {
        const result = (await client.callTool({
          name: "run_command",
          arguments: { command: "curl -sS --max-time 5 --proxytunnel http://evil.test:9/x" },
        })) as CallToolResult;
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({
          outcome: "denied",
          detail: "curl: (56) CONNECT tunnel failed, response 403",
          deniedBy: "the network allow-list (the sandbox's filtering proxy refused the host)",
          enforcement: { mode: "read-only", network: "allow-list" },
        });
      } finally {
        await client.close();
        await mcp.close();
      }
    },
  );
});
