import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import { connect, type LookupFunction, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { hostAllowed } from "./domain-allow-list.js";

/** What the proxy says when it refuses a host; the confined command's tools print parts of it. */
export const PROXY_DENIAL_REASON = "Forbidden by sandbox network allow-list";
/** The body of a refusal (what `wget`, Python and plain-HTTP clients show). */
export const PROXY_DENIAL_PREFIX = "suaveplan-sandbox: network allow-list denied";

/** Options of {@link startFilteringProxy}. */
export interface FilteringProxyOptions {
  /** Normalised allow-list entries (see `checkAllowList`). */
  allow: readonly string[];
  /** Resolver for upstream connections (default: the system's, `dns.lookup`); a seam for tests. */
  lookup?: LookupFunction | undefined;
  /** Directory for the proxy's private socket directory (default `os.tmpdir()`). */
  socketRoot?: string | undefined;
}

/** One request the proxy refused. */
export interface ProxyDenial {
  /** The host the command asked for. */
  host: string;
  /** The port it asked for. */
  port: number;
}

/** A running filtering proxy. */
export interface FilteringProxy {
  /** Absolute path of the proxy's UNIX socket (in a private 0700 directory). */
  readonly socketPath: string;
  /** Requests refused so far (most recent last, at most 100 kept). */
  readonly denials: readonly ProxyDenial[];
  /** Stop listening, destroy every open connection, remove the socket. Idempotent. */
  close(): void;
}

/**
 * Start a forward HTTP proxy on a UNIX socket that lets through only hosts on
 * the allow-list: `CONNECT host:port` (HTTPS and any TLS) is tunnelled, a
 * plain `GET http://host/…` is forwarded; anything else is answered with
 * `403 Forbidden by sandbox network allow-list` and a body naming the host.
 * Node's HTTP server does the parsing. Listening is synchronous, so the socket
 * exists when this returns.
 */
export function startFilteringProxy(options: FilteringProxyOptions): FilteringProxy {
  const dir = mkdtempSync(join(options.socketRoot ?? tmpdir(), "suaveplan-proxy-"));
  const socketPath = join(dir, "proxy.sock");
  const denials: ProxyDenial[] = [];
  const open = new Set<Duplex>();
  const track = (socket: Duplex): void => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  const deny = (host: string, port: number): string => {
    denials.push({ host, port });
    if (denials.length > 100) denials.shift();
    return `${PROXY_DENIAL_PREFIX} ${host}:${port}\n`;
  };
  const lookup = options.lookup;

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end("suaveplan-sandbox: proxy requests need an absolute URL\n");
      return;
    }
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    if (url.protocol !== "http:" || !hostAllowed(url.hostname, options.allow)) {
      res.writeHead(403, PROXY_DENIAL_REASON, { "content-type": "text/plain" }).end(deny(url.hostname, port));
      return;
    }
    const headers = { ...req.headers };
    delete headers["proxy-connection"];
    delete headers["proxy-authorization"];
    const upstream = request(
      { host: url.hostname, port, path: `${url.pathname}${url.search}`, method: req.method, headers, lookup },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("socket", track);
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end("suaveplan-sandbox: proxy could not reach the host\n");
    });
    req.pipe(upstream);
  });
  server.on("connection", track);
  server.on("connect", (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const target = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? "");
    const host = target?.[1] ?? "";
    const port = Number(target?.[2] ?? 0);
    if (target === null || port < 1 || port > 65535 || !hostAllowed(host, options.allow)) {
      const body = deny(host || (req.url ?? ""), port);
      client.end(
        `HTTP/1.1 403 ${PROXY_DENIAL_REASON}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    const upstream: Socket = connect({ host, port, ...(lookup === undefined ? {} : { lookup }) });
    track(upstream);
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    const drop = (): void => {
      upstream.destroy();
      client.destroy();
    };
    upstream.once("error", () => {
      if (client.writable) client.end("HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\n");
      upstream.destroy();
    });
    client.once("error", drop);
  });
  server.on("clientError", (_error, socket) => socket.destroy());
  server.listen(socketPath);
  server.unref();
  let closed = false;
  return {
    socketPath,
    denials,
    close() {
      if (closed) return;
      closed = true;
      server.close();
      for (const socket of open) socket.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
