import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { parseDuration } from "@suaveplan/sandbox-core/schemas";
import { type RedisFactory, redisFactory } from "./connection.js";
import { INBOX_TRANSPORTS, type InboxTransport } from "./inbox.js";

/** A queue's name: also the namespace of its inboxes. */
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,48}$/;

/** What a caller and a worker share: where Redis is and which queue. */
export interface QueueAddress {
  redis: RedisFactory;
  queue: string;
  prefix: string;
}

export function queueAddress(options: Record<string, unknown>, root: string): QueueAddress {
  const queue = options.queue ?? "sandbox";
  if (typeof queue !== "string" || !QUEUE_NAME.test(queue)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.queue: must be 1-48 letters, digits, '_' or '-' (got ${JSON.stringify(queue)})`,
    );
  }
  const prefix = options.prefix ?? "sandbox";
  if (typeof prefix !== "string" || !QUEUE_NAME.test(prefix)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.prefix: must be 1-48 letters, digits, '_' or '-' (got ${JSON.stringify(prefix)})`,
    );
  }
  if (options.connection === undefined) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.connection: is required (a Redis URL such as redis://127.0.0.1:6379, a unix socket path, or ioredis options)`,
    );
  }
  return { redis: redisFactory(options.connection, `${root}.connection`), queue, prefix };
}

/** A duration option in ms (`"30s"` or a number of ms), or its default. */
export function durationOption(
  options: Record<string, unknown>,
  key: string,
  root: string,
  fallback: number,
): number {
  const value = options[key];
  return value === undefined ? fallback : parseDuration(value, `${root}.${key}`);
}

/** A positive integer option, or its default. */
export function countOption(
  options: Record<string, unknown>,
  key: string,
  root: string,
  fallback: number,
): number {
  const value = options[key];
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.${key}: must be a positive integer (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

/** Refuse keys this part does not know, naming them and the ones it does. */
export function refuseUnknownKeys(
  options: Record<string, unknown>,
  known: readonly string[],
  root: string,
): void {
  const unknown = Object.keys(options).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; known: ${known.join(", ")}`,
    );
  }
}

/** Built-in engines that run guest code on the calling thread (a worker's own thread, here). */
const ON_THE_CALLERS_THREAD: ReadonlySet<string> = new Set(["vm", "quickjs"]);

/**
 * Why `engine` cannot run remotely with this timeout, or undefined: vm and
 * quickjs run guest code on the worker's own thread, so a busy loop also
 * stops BullMQ from renewing the job's lock; past the lock duration another
 * worker would take the job while it still runs.
 */
export function threadLockProblem(engine: string, timeout: number, lockDuration: number): string | undefined {
  if (!ON_THE_CALLERS_THREAD.has(engine) || timeout <= lockDuration / 2) return undefined;
  return (
    `the "${engine}" engine runs guest code on the worker's own thread, so a busy loop also stops BullMQ renewing the job's lock; ` +
    `its timeout (${timeout} ms) must be at most half the lock duration (${lockDuration} ms): lower the timeout, raise lockDuration, or use "isolate"`
  );
}

/** The `transport` option, checked. */
export function transportOption(options: Record<string, unknown>, root: string): InboxTransport {
  const transport = options.transport ?? "relay";
  if (!INBOX_TRANSPORTS.includes(transport as InboxTransport)) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.transport: must be "relay" or "queues" (got ${JSON.stringify(transport)})`,
    );
  }
  return transport as InboxTransport;
}
