// Streamable HTTP on 127.0.0.1: the SDK's client with the bearer token; everything else is refused.
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { resolveMcpConfig } from "../src/config/mcp-config.js";
import { startHttpServer } from "../src/server/serve-http.js";

const TOKEN = "test-token-0123456789abcdef";
const settings = resolveMcpConfig(
  { engine: "vm", allowUnsafeEngines: true, enabledTools: ["run_javascript"] },
  { baseDir: "/", cwd: "/" },
);

function raw(url: string, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", headers: { "content-type": "application/json", ...headers } },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.once("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
  });
}

describe("startHttpServer", () => {
  it("serves the SDK's Streamable HTTP client that sends the token", async () => {
    const http = await startHttpServer(settings, { token: TOKEN });
    try {
      expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const client = new Client({ name: "test", version: "0.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(http.url), {
          requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
        }),
      );
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["run_javascript"]);
      const result = (await client.callTool({
        name: "run_javascript",
        arguments: { code: "6 * 7" },
      })) as CallToolResult;
      expect(result.structuredContent).toMatchObject({ success: true, result: 42 });
      await client.close();
    } finally {
      await http.close();
      await http.close(); // idempotent
    }
  });

  it("refuses a missing or wrong token (401), a foreign Host or Origin (403), another path (404)", async () => {
    const http = await startHttpServer(settings, { token: TOKEN });
    const port = new URL(http.url).port;
    try {
      expect(await raw(http.url, {})).toBe(401);
      expect(await raw(http.url, { authorization: "Bearer wrong-token-0123456789ab" })).toBe(401);
      const auth = { authorization: `Bearer ${TOKEN}` };
      expect(await raw(http.url, { ...auth, host: `evil.example:${port}` })).toBe(403);
      expect(await raw(http.url, { ...auth, origin: "http://evil.example" })).toBe(403);
      expect(await raw(http.url.replace("/mcp", "/other"), auth)).toBe(404);
      // Authorised, but no session yet: only an initialize request opens one.
      expect(await raw(http.url, auth)).toBe(400);
    } finally {
      await http.close();
    }
  });

  it("a client's DELETE ends its session; past maxSessions an initialize closes the least recently used idle session, and gets 503 only when all are busy", async () => {
    const http = await startHttpServer(settings, { token: TOKEN, maxSessions: 2 });
    const connect = async () => {
      const transport = new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      });
      const client = new Client({ name: "test", version: "0.0.0" });
      await client.connect(transport);
      return { client, transport };
    };
    const run = (client: Client, code: string) =>
      client.callTool({ name: "run_javascript", arguments: { code } }) as Promise<CallToolResult>;
    try {
      const first = await connect();
      await first.transport.terminateSession();
      await first.client.close();
      expect(http.liveServers).toBe(0);

      // One holder opens sessions past the cap: the least recently used idle one goes, not the newcomer.
      const a = await connect();
      const b = await connect();
      await run(a.client, "1"); // b is now the least recently used
      const c = await connect();
      expect(http.liveServers).toBe(2);
      expect((await run(a.client, "2")).structuredContent).toMatchObject({ result: 2 });
      expect((await run(c.client, "3")).structuredContent).toMatchObject({ result: 3 });
      await expect(run(b.client, "4")).rejects.toThrow(/404|unknown session/);

      // Every session with a call in flight: a further initialize is refused, and nothing stays behind.
      const slowA = run(a.client, "await new Promise((r) => setTimeout(r, 1500)); 5");
      const slowC = run(c.client, "await new Promise((r) => setTimeout(r, 1500)); 6");
      await new Promise((resolve) => setTimeout(resolve, 300));
      await expect(connect()).rejects.toThrow(/503|each with a call in flight/);
      expect(http.liveServers).toBe(2);
      expect((await slowA).structuredContent).toMatchObject({ result: 5 });
      expect((await slowC).structuredContent).toMatchObject({ result: 6 });
      for (const { client } of [a, b, c]) await client.close();
    } finally {
      await http.close();
    }
    expect(http.liveServers).toBe(0);
  });

  it("an initialize the transport refuses (406: no text/event-stream in Accept) leaves no server behind", async () => {
    const http = await startHttpServer(settings, { token: TOKEN });
    try {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          http.url,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              accept: "application/json",
              authorization: `Bearer ${TOKEN}`,
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.once("error", reject);
        req.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-06-18",
              capabilities: {},
              clientInfo: { name: "raw", version: "0" },
            },
          }),
        );
      });
      expect(status).toBe(406);
      expect(http.liveServers).toBe(0);
    } finally {
      await http.close();
    }
  });

  it("a session idle for idleTimeoutMs is closed: its id is unknown afterwards; a longer call is not idleness", async () => {
    const http = await startHttpServer(settings, { token: TOKEN, idleTimeoutMs: 100 });
    try {
      const transport = new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      });
      const client = new Client({ name: "test", version: "0.0.0" });
      await client.connect(transport);
      const sessionId = transport.sessionId ?? "";
      expect(sessionId).not.toBe("");
      // A call longer than the idle timeout is not idleness: it is answered.
      const slow = (await client.callTool(
        {
          name: "run_javascript",
          arguments: { code: "await new Promise((r) => setTimeout(r, 400)); 7" },
        },
        undefined,
        { timeout: 5000 },
      )) as CallToolResult;
      expect(slow.structuredContent).toMatchObject({ success: true, result: 7 });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await raw(http.url, { authorization: `Bearer ${TOKEN}`, "mcp-session-id": sessionId })).toBe(
        404,
      );
      await client.close();
    } finally {
      await http.close();
    }
  });

  it("a token shorter than 16 characters is SANDBOX_INVALID_CONFIG; nothing listens", async () => {
    await expect(startHttpServer(settings, { token: "short" })).rejects.toMatchObject({
      code: "SANDBOX_INVALID_CONFIG",
      message: expect.stringMatching(/^http: the bearer token must be at least 16 characters/),
    });
  });
});
