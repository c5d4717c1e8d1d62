import { Relay } from "bullmq";
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
