import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { Redis, type RedisOptions } from "ioredis";

/**
 * Where Redis is: a URL (`redis://host:6379/0`, `rediss://…`, `unix:///run/redis.sock`),
 * an absolute unix socket path, or ioredis options.
 */
export type RedisConnection = string | RedisOptions;

/** Opens new clients on one Redis, each ready for BullMQ (no per-command retry limit). */
export type RedisFactory = () => Redis;

/**
 * A factory of clients for `connection`; throws `SANDBOX_INVALID_CONFIG`
 * naming `field` when it is not a connection.
 */
export function redisFactory(connection: unknown, field: string): RedisFactory {
  const options = redisOptions(connection, field);
  // BullMQ needs maxRetriesPerRequest: null on blocking clients; offline commands wait for the reconnect.
  const merged: RedisOptions = { maxRetriesPerRequest: null, ...options };
  // ioredis' own option type does not fit its constructor under exactOptionalPropertyTypes.
  const RedisClient = Redis as unknown as new (options: RedisOptions) => Redis;
  return () => new RedisClient(merged);
}

function redisOptions(connection: unknown, field: string): RedisOptions {
  if (typeof connection === "object" && connection !== null && !Array.isArray(connection)) {
    return connection as RedisOptions;
  }
  if (typeof connection !== "string" || connection === "") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${field}: must be a Redis URL (redis://host:6379), a unix socket path or ioredis options (got ${connection === "" ? '""' : typeof connection})`,
    );
  }
  if (connection.startsWith("/")) return { path: connection };
  let url: URL;
  try {
    url = new URL(connection);
  } catch {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${field}: ${JSON.stringify(connection)} is not a URL; write redis://host:6379, rediss://host:6380 or unix:///path/to/redis.sock`,
    );
  }
  if (url.protocol === "unix:") return { path: decodeURIComponent(url.pathname) };
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${field}: the scheme ${JSON.stringify(url.protocol)} is not Redis; use redis:, rediss: or unix:`,
    );
  }
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${field}: the database ${JSON.stringify(url.pathname.slice(1))} must be a non-negative integer`,
    );
  }
  return {
    host: url.hostname,
    port: url.port === "" ? 6379 : Number(url.port),
    db,
    ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
    ...(url.protocol === "rediss:" ? { tls: {} } : {}),
  };
}

/** A client and the connections made from it. */
export interface ConnectionFamily {
  /** Disconnect the client and every connection duplicated from it; none reconnects. */
  endAll(): void;
}

/**
 * Track `client` and the connections BullMQ and its Relay duplicate from it
 * for their blocking reads, so closing can end every one of them: a
 * connection left reconnecting to a Redis that is gone keeps the process alive.
 */
export function connectionFamily(client: Redis): ConnectionFamily {
  const connections = new Set<Redis>([client]);
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (...args: Parameters<Redis["duplicate"]>) => {
    const copy = duplicate(...args);
    connections.add(copy);
    copy.once("end", () => connections.delete(copy));
    return copy;
  };
  return {
    endAll() {
      for (const connection of connections) connection.disconnect();
    },
  };
}
