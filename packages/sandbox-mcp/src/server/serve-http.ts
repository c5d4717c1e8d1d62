import { randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { checkMcpSettings, type SandboxMcpSettings } from "../config/mcp-config.js";
import {
  createSandboxMcpServer,
  type SandboxMcpServer,
  type SandboxMcpServerOptions,
} from "./sandbox-mcp-server.js";

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions extends SandboxMcpServerOptions {
  /** TCP port on 127.0.0.1 (0, the default, picks a free one). */
  port?: number;
  /** The bearer token every request must carry (`Authorization: Bearer <token>`), at least 16 characters. */
  token: string;
  /**
   * Sessions open at once (each holds a sandbox and a provider), default 8. A further `initialize`
   * closes the least recently used session that has no call in flight; only when every session is
   * busy does it get 503.
   */
  maxSessions?: number;
  /** A session with no request for this long (ms), and no call in flight, is closed, releasing its sandbox. Default 30 minutes. */
  idleTimeoutMs?: number;
}

/** A running Streamable HTTP endpoint; `close()` ends every session and the listener. */
export interface SandboxMcpHttpServer extends AsyncDisposable {
  /** The endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** MCP servers alive: one per open session, plus any whose `initialize` is being answered. */
  readonly liveServers: number;
  /** Close every session (its sandbox and provider) and the listener. Idempotent. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Session {
  transport: StreamableHTTPServerTransport;
  mcp: SandboxMcpServer;
  idle: NodeJS.Timeout;
  /** POST requests being answered (a tool call in flight); a session with none may be evicted. */
  busy: number;
}

/**
 * Serve the sandbox MCP server over the SDK's Streamable HTTP transport on
 * 127.0.0.1 only, at `/mcp`. Every request must carry the bearer `token`
 * (401 otherwise) and a `Host` (and, when present, `Origin`) naming this
 * listener (403 otherwise: DNS rebinding). Each MCP session gets its own
 * server — its own sandbox, provider and `maxConcurrentCalls`. Everyone with
 * the token is one client, so sessions are bounded together: when
 * `maxSessions` are open, an `initialize` closes the least recently used one
 * with no call in flight (503 only when every session is busy).
 * @throws SandboxError (`SANDBOX_INVALID_CONFIG`) for a short token, a bad port or bad settings.
 */
export async function startHttpServer(
  settings: SandboxMcpSettings,
  options: HttpServerOptions,
): Promise<SandboxMcpHttpServer> {
  const { port = 0, token, maxSessions = 8, idleTimeoutMs = 30 * 60_000, ...serverOptions } = options;
  if (typeof token !== "string" || token.length < 16) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      "http: the bearer token must be at least 16 characters",
    );
  }
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, "http: port must be an integer from 0 to 65535");
  }
  if (!Number.isInteger(maxSessions) || maxSessions < 1) {
    throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, "http: maxSessions must be a positive integer");
  }
  if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 1 || idleTimeoutMs > 2_147_483_647) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      "http: idleTimeoutMs must be a positive number of ms",
    );
  }
  checkMcpSettings(settings);
  const expected = Buffer.from(`Bearer ${token}`);
  // In order of last use: the first is the least recently used.
  const sessions = new Map<string, Session>();
  const live = new Set<SandboxMcpServer>();
  let starting = 0;
  const release = (mcp: SandboxMcpServer): Promise<void> => {
    live.delete(mcp);
    return mcp.close();
  };
  let origins: Set<string> = new Set();
  let hosts: Set<string> = new Set();

  const end = (sessionId: string): void => {
    const session = sessions.get(sessionId);
    if (session === undefined) return;
    sessions.delete(sessionId);
    clearTimeout(session.idle);
    void release(session.mcp);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/mcp") return reply(res, 404, "not found");
    if (!hosts.has(req.headers.host ?? "")) return reply(res, 403, "forbidden host");
    const origin = req.headers.origin;
    if (origin !== undefined && !origins.has(origin)) return reply(res, 403, "forbidden origin");
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      res.setHeader("WWW-Authenticate", "Bearer");
      return reply(res, 401, "unauthorized");
    }
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const session = sessions.get(id);
      if (session === undefined) return reply(res, 404, "unknown session");
      session.idle.refresh();
      sessions.delete(id);
      sessions.set(id, session);
      if (req.method === "POST") {
        session.busy++;
        res.once("close", () => session.busy--);
      }
      return session.transport.handleRequest(req, res);
    }
    if (req.method !== "POST") return reply(res, 400, "no session: initialize first");
    const body = await readJson(req);
    if (body === undefined) return reply(res, 400, "the body must be JSON");
    if (!isInitializeRequest(body)) return reply(res, 400, "no session: initialize first");
    if (sessions.size + starting >= maxSessions) {
      const idle = [...sessions].find(([, session]) => session.busy === 0);
      if (idle === undefined) return reply(res, 503, "too many sessions, each with a call in flight");
      end(idle[0]);
    }
    starting++;
    let mcp: SandboxMcpServer;
    try {
      mcp = await createSandboxMcpServer(settings, serverOptions);
    } catch (error) {
      starting--;
      throw error;
    }
    live.add(mcp);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        // A session with a call in flight is not idle: its time starts again (calls have their own timeouts).
        const idle = setTimeout(() => {
          const session = sessions.get(sessionId);
          if (session !== undefined && session.busy > 0) session.idle.refresh();
          else end(sessionId);
        }, idleTimeoutMs);
        idle.unref();
        sessions.set(sessionId, { transport, mcp, idle, busy: 0 });
      },
      // A client's DELETE ends its session (and releases its sandbox).
      onsessionclosed: (sessionId) => end(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) end(transport.sessionId);
      void release(mcp);
    };
    try {
      await mcp.connect(transport);
      await transport.handleRequest(req, res, body);
    } finally {
      starting--;
      // An initialize the transport refused (406, 400 …) opened no session: its server goes now.
      if (!sessions.has(transport.sessionId ?? "")) await release(mcp);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) reply(res, 500, "internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  hosts = new Set([`127.0.0.1:${actual}`, `localhost:${actual}`]);
  origins = new Set([`http://127.0.0.1:${actual}`, `http://localhost:${actual}`]);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const open = [...sessions.values()];
      sessions.clear();
      for (const session of open) clearTimeout(session.idle);
      await Promise.allSettled([...live].map((mcp) => release(mcp)));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    })();
    return closing;
  };
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    get liveServers() {
      return live.size;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}
