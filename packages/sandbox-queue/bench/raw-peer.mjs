// The floor the queue engine is built on, in a process of its own: a plain
// BullMQ Worker whose processor returns 5 at once (first telling the caller's
// Relay inbox, when the job names one), and a Relay inbox that sends every
// message straight back to its sender.
// `node raw-peer.mjs '{"socket":…,"queue":…,"prefix":…}'`; prints "ready <inbox>".
import { Relay, Worker } from "bullmq";
import { Redis } from "ioredis";

const { socket, queue, prefix } = JSON.parse(process.argv[2] ?? "{}");
const client = new Redis({ path: socket, maxRetriesPerRequest: null });
const relay = new Relay({
  connection: client,
  prefix,
  namespace: queue,
  leaseDuration: 10_000,
  blockTimeout: 1000,
});
await relay.waitUntilReady();
await relay.subscribe(`inbox.${relay.nodeId}`, (message) => {
  void relay.publish(`inbox.${message.data.from}`, message.data);
});
const worker = new Worker(
  queue,
  async (job) => {
    if (job.data.from !== undefined) await relay.publish(`inbox.${job.data.from}`, { done: job.id });
    return 5;
  },
  { connection: client, prefix, concurrency: 1 },
);
await worker.waitUntilReady();
process.stdout.write(`ready ${relay.nodeId}\n`);
const stop = async () => {
  await worker.close();
  await relay.close();
  client.disconnect();
  process.exit(0);
};
process.once("SIGTERM", () => void stop());
process.once("disconnect", () => process.exit(1));
