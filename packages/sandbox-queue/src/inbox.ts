import { randomUUID } from "node:crypto";
import { Queue, Relay, Worker } from "bullmq";
import type { Redis } from "ioredis";

/**
 * One process's mailbox on Redis: others send to its `address`, it receives
 * in order. Kept this small so the transport can change — BullMQ's Relay
 * (per-node inboxes with liveness leases) is marked experimental, so the rest
 * of the package sees only this interface.
 */
export interface Inbox {
  /** Where others send to reach this process. */
  readonly address: string;
  /** Deliver `message` to `to`; resolves false when no live process has that address (its lease ran out). */
  send(to: string, message: unknown): Promise<boolean>;
  /** Stop receiving and give the address up. Idempotent. */
  close(): Promise<void>;
}

export interface InboxOptions {
  client: Redis;
  prefix: string;
  /** The queue's name: inboxes of different queues never meet. */
  namespace: string;
  /** How long the address lives without a heartbeat, in ms. */
  leaseMs: number;
  receive(message: unknown): void;
  onError(error: Error): void;
}

/** How inboxes travel: BullMQ's Relay (default), or plain BullMQ queues, the fallback should the Relay change. */
export type InboxTransport = "relay" | "queues";

export const INBOX_TRANSPORTS: readonly InboxTransport[] = ["relay", "queues"];

/** Which transport an address belongs to: queue-inbox addresses start with `q-`. */
export function transportOf(address: string): InboxTransport {
  return address.startsWith("q-") ? "queues" : "relay";
}

/** Open this process's inbox on `transport`. */
export function openInbox(transport: InboxTransport, options: InboxOptions): Promise<Inbox> {
  return transport === "queues" ? openQueueInbox(options) : openRelayInbox(options);
}

const TOPIC = (address: string) => `inbox.${address}`;

/** An inbox on BullMQ's Relay. */
export async function openRelayInbox(options: InboxOptions): Promise<Inbox> {
  const relay = new Relay({
    connection: options.client,
    prefix: options.prefix,
    namespace: options.namespace,
    leaseDuration: options.leaseMs,
    blockTimeout: 1000,
  });
  relay.on("error", (error: Error) => options.onError(error));
  try {
    await relay.waitUntilReady();
    await relay.subscribe(TOPIC(relay.nodeId), (message) => options.receive(message.data));
  } catch (error) {
    await relay.close().catch(() => undefined);
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    address: relay.nodeId,
    async send(to, message) {
      const published = await relay.publish(TOPIC(to), message);
      return published.endpoints > 0;
    },
    close() {
      closing ??= relay.close().catch(() => undefined);
      return closing;
    },
  };
}

/**
 * An inbox on plain BullMQ queues: one queue per process (`inbox-<address>`)
 * read by a worker of concurrency 1, so messages arrive in order, and a key
 * with a TTL that says the address is alive (renewed every lease / 3). Slower
 * than the Relay (each message is a job), and the empty queue of a process
 * that died stays in Redis; it exists so the Relay can be dropped without
 * changing the rest.
 */
export async function openQueueInbox(options: InboxOptions): Promise<Inbox> {
  const address = `q-${randomUUID().replace(/-/g, "")}`;
  const { client, prefix, namespace, leaseMs } = options;
  const aliveKey = (of: string) => `${prefix}:${namespace}:inbox-alive:${of}`;
  const queueName = (of: string) => `${namespace}-inbox-${of}`;
  const renew = () => client.set(aliveKey(address), "1", "PX", leaseMs);
  await renew();
  const heartbeat = setInterval(
    () => void renew().catch(() => undefined),
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref();
  const worker = new Worker(
    queueName(address),
    async (job) => {
      options.receive(job.data);
    },
    {
      connection: client,
      prefix,
      concurrency: 1,
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
    },
  );
  worker.on("error", (error) => options.onError(error));
  // Senders' queues, opened on first use and kept (one per peer address).
  const senders = new Map<string, Queue>();
  const senderFor = (to: string) => {
    let queue = senders.get(to);
    if (queue === undefined) {
      queue = new Queue(queueName(to), { connection: client, prefix });
      queue.on("error", (error) => options.onError(error));
      senders.set(to, queue);
      if (senders.size > 1024) {
        const [oldest, old] = senders.entries().next().value as [string, Queue];
        senders.delete(oldest);
        void old.close().catch(() => undefined);
      }
    }
    return queue;
  };
  let closing: Promise<void> | undefined;
  return {
    address,
    async send(to, message) {
      if ((await client.exists(aliveKey(to))) === 0) return false;
      await senderFor(to).add("m", message, { removeOnComplete: true, removeOnFail: true });
      return true;
    },
    close() {
      closing ??= (async () => {
        clearInterval(heartbeat);
        await worker.close().catch(() => undefined);
        await client.del(aliveKey(address)).catch(() => 0);
        const own = new Queue(queueName(address), { connection: client, prefix });
        await own.obliterate({ force: true }).catch(() => undefined);
        await own.close().catch(() => undefined);
        for (const queue of senders.values()) await queue.close().catch(() => undefined);
      })();
      return closing;
    },
  };
}
