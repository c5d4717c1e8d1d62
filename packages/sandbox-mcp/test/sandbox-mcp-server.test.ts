// The server in process, over the SDK's in-memory transport: what the stdio suite (sandbox-cli) does not cover.
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
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
      { engine: "vm", allowUnsafeEngines: true, enabledTools: ["run_javascript"] },
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
      // structuredContent is JSON: what JSON cannot carry is a one-key $-tag.
      expect((values.structuredContent as { result: unknown }).result).toEqual({
        big: { $bigint: "5" },
        map: { $map: [[1, 2]] },
        inf: { $number: "-Infinity" },
        when: { $date: "1970-01-01T00:00:00.000Z" },
        gone: { $undefined: true },
      });
    } finally {
      await client.close();
      await mcp.close();
      await mcp.close(); // idempotent
    }
  });

  it("run_javascript normalises a fenced program and says so; its description lists the guest globals", async () => {
    const { client, mcp } = await connected(
      { engine: "isolate", enabledTools: ["run_javascript"] },
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
      const listed = (await client.listTools()).tools.find((tool) => tool.name === "run_javascript");
      // Listed once, whether the tools' declarations carry them or the description adds them.
      const description = listed?.description ?? "";
      expect(description).toContain("- URL: WHATWG URL parsing and serialisation");
      expect(description).toContain("- structuredClone: ");
      expect(description).toContain("- fetch: no network from guest code; call a host tool instead");
      expect(description.split("Globals beside the JavaScript built-ins:").length).toBe(2);
      const code = "```js\nconst n = await tools.double({ n: 21 });\nconsole.log('n is', n);\nn\n```";
      const result = (await client.callTool({
        name: "run_javascript",
        arguments: { code },
      })) as CallToolResult;
      const structured = {
        success: true,
        normalised: ["removed the Markdown fences (```js) around the code"],
        logs: [{ level: "log", message: "n is 42" }],
        calls: [
          { tool: "double", status: "ok", input: { n: 21 }, output: 42, durationMs: expect.any(Number) },
        ],
        usage: expect.any(Object),
        result: 42,
      };
      expect(result).toEqual({
        content: [{ type: "text", text: expect.any(String) }],
        structuredContent: structured,
      });
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(structured);
      // Code with nothing to normalise has no "normalised" field.
      const plain = (await client.callTool({
        name: "run_javascript",
        arguments: { code: "6 * 7" },
      })) as CallToolResult;
      expect(plain.structuredContent).not.toHaveProperty("normalised");
      expect(plain.structuredContent).toMatchObject({ success: true, result: 42 });
    } finally {
      await client.close();
      await mcp.close();
    }
  });

  it("a cwd outside the workspace is an isError result naming the option; nothing runs", async () => {
    const { client, mcp } = await connected({
      engine: "vm",
      allowUnsafeEngines: true,
      enabledTools: ["run_command"],
    });
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
        allowUnsafeEngines: true,
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

  it.skipIf(!hasCurl)(
    "a connection under network deny is denied, and the denial names the network policy",
    async () => {
      const listener = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
      const { port } = listener.address() as AddressInfo;
      const { client, mcp } = await connected({
        engine: "vm",
        allowUnsafeEngines: true,
        enabledTools: ["run_command"],
        shell: { network: "deny" },
      });
      try {
        const result = (await client.callTool({
          name: "run_command",
          arguments: { command: `curl -sS --max-time 5 http://127.0.0.1:${port}/` },
        })) as CallToolResult;
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toMatchObject({
          outcome: "denied",
          deniedBy: 'the network policy "deny" (the command has no network)',
          enforcement: { network: "deny" },
        });
      } finally {
        await client.close();
        await mcp.close();
        listener.close();
      }
    },
  );

  it("a 2e5-object result is answered within maxOutputBytes, both copies together, saying what was cut", async () => {
    const { client, mcp } = await connected({
      engine: "vm",
      allowUnsafeEngines: true,
      enabledTools: ["run_javascript"],
    });
    try {
      const result = (await client.callTool({
        name: "run_javascript",
        arguments: {
          code: 'console.log("made"); Array.from({ length: 2e5 }, (_, i) => ({ i, s: "abcdefghij" }))',
        },
      })) as CallToolResult;
      // Under 19 MB before: the value twice, as text and as structuredContent.
      expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThanOrEqual(65_536);
      const out = result.structuredContent as { result: unknown[] } & Record<string, unknown>;
      // The text block is the structured content serialised (MCP's advice for tools with an outputSchema).
      expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(out);
      const items = out.result;
      expect(items.slice(0, 2)).toEqual([
        { i: 0, s: "abcdefghij" },
        { i: 1, s: "abcdefghij" },
      ]);
      expect(items.at(-1)).toEqual({ $cut: `${2e5 - (items.length - 1)} more items` });
      expect(out).toEqual({
        success: true,
        result: items,
        logs: [{ level: "log", message: "made" }],
        calls: [],
        usage: expect.any(Object),
        truncated: "cut to keep the response within 65536 bytes: the result (see its $cut tags)",
      });
    } finally {
      await client.close();
      await mcp.close();
    }
  });

  it("a client that asks for progress gets run_javascript's log lines as they are written, bounded", async () => {
    const { client, mcp } = await connected({
      engine: "vm",
      allowUnsafeEngines: true,
      enabledTools: ["run_javascript"],
    });
    try {
      const progress: Progress[] = [];
      const result = (await client.callTool(
        {
          name: "run_javascript",
          arguments: {
            code: 'console.log("one"); await new Promise((r) => setTimeout(r, 300)); console.warn("two"); 3',
          },
        },
        undefined,
        { onprogress: (p) => progress.push(p) },
      )) as CallToolResult;
      expect(result.structuredContent).toMatchObject({ success: true, result: 3 });
      expect(progress).toEqual([
        { progress: 1, message: "one" },
        { progress: 2, message: "two" },
      ]);

      // A thousand lines at once: the first at once, the rest in one notification cut at 4 KiB.
      const burst: Progress[] = [];
      await client.callTool(
        {
          name: "run_javascript",
          arguments: { code: 'for (let i = 0; i < 1000; i++) console.log("line " + i)' },
        },
        undefined,
        { onprogress: (p) => burst.push(p) },
      );
      expect(burst.length).toBe(2);
      expect(burst[0]).toEqual({ progress: 1, message: "line 0" });
      expect(burst[1]?.progress).toBe(1000);
      expect(burst[1]?.message).toMatch(/^line 1\nline 2\n[\s\S]*\n\[\d+ more lines cut\]$/);
      expect(Buffer.byteLength(burst[1]?.message ?? "")).toBeLessThan(4096 + 100);
    } finally {
      await client.close();
      await mcp.close();
    }
  });
});
