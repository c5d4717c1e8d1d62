// Scale-out, end to end: a redis-server, two `suaveplan-sandbox worker`
// processes that hold no secrets, and this process as the caller, whose
// `price` tool stands for the application's database. Two orders run at once,
// one on each worker; worker 1 is killed (SIGKILL) while its guest waits for a
// price. BullMQ hands its job to worker 2, whose replay gets the prices already
// given from this caller's journal: every (order, item) is priced exactly once,
// and both totals are right. Exits 0 only then.
// Run after the build (needs redis-server on PATH): node examples/queue/scale-out.mjs
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

async function load(name, built) {
  try {
    return await import(name);
  } catch {
    // examples/ is not a workspace package, so the name may not resolve: use the build output.
    return import(new URL(`../../packages/sandbox-queue/dist/${built}`, import.meta.url).href);
  }
}
const { createQueueSandbox } = await load("@suaveplan/sandbox-queue", "index.js");
const { startRedisServer } = await load("@suaveplan/sandbox-queue/testing", "testing/redis-server.js");

const PRICES = { apple: 3, pear: 5, plum: 7, fig: 11 };
const ORDERS = { A: ["apple", "pear", "plum"], B: ["fig", "apple", "pear"] };
const CODE = "let total = 0; for (const item of items) total += await tools.price({ order, item }); total";

/**
 * `suaveplan-sandbox worker` on the queue "orders", one job at a time, with short lock and
 * stall intervals so a killed worker's job is taken over within about 2 s (the defaults are
 * 30 s each). Resolves when it takes jobs.
 */
function startWorker(url) {
  const cli = fileURLToPath(new URL("../../packages/sandbox-cli/dist/bin.js", import.meta.url));
  const flags = ["--redis", url, "--queue", "orders", "--engine", "isolate", "--concurrency", "1"];
  const child = spawn(
    process.execPath,
    [cli, "worker", ...flags, "--lock-duration", "2s", "--stalled-interval", "1s"],
    {
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  children.add(child);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const stop = async (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  let output = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      output += chunk;
      if (/: ready/.test(output)) resolve({ kill9: () => stop("SIGKILL"), stop: () => stop("SIGTERM") });
    });
    void exited.then((code) =>
      reject(new Error(`a worker exited (${code}) before it was ready:\n${output}`)),
    );
  });
}
// Should this process end early (an uncaught error), its workers end with it.
const children = new Set();
process.once("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

const redis = await startRedisServer(); // your Redis in production: redis://host:6379
const workers = [];
let sandbox;
let right = false;
try {
  workers.push(await startWorker(redis.url), await startWorker(redis.url));
  console.log("redis-server and two workers up (one job at a time each)");

  const priced = [];
  let bothWaiting;
  let releasePrices;
  const waiting = new Promise((resolve) => {
    bothWaiting = resolve;
  });
  const released = new Promise((resolve) => {
    releasePrices = resolve;
  });
  sandbox = createQueueSandbox(
    { connection: redis.url, queue: "orders" },
    {
      timeout: "20s",
      tools: {
        price: {
          description: "The price of an item",
          inputSchema: {
            type: "object",
            properties: { order: { type: "string" }, item: { type: "string" } },
            required: ["order", "item"],
          },
          execute: async ({ order, item }) => {
            priced.push(`${order}/${item}`);
            if (priced.length <= 2) {
              // Each order's first price: held until both orders wait for one, one on each worker.
              if (priced.length === 2) bothWaiting();
              await released;
            }
            return PRICES[item];
          },
        },
      },
    },
  );
  const results = Promise.all(
    Object.entries(ORDERS).map(([order, items]) => sandbox.execute(CODE, { order, items })),
  );
  await waiting;
  await workers[0].kill9();
  const killedAt = performance.now();
  console.log(
    "two orders running, one on each worker; worker 1 killed (SIGKILL) while its order waits for a price",
  );
  releasePrices();

  const [a, b] = await results;
  const elapsed = performance.now() - killedAt;
  for (const [order, result] of [
    ["A", a],
    ["B", b],
  ]) {
    console.log(`order ${order}: ${result.success ? `total ${result.result}` : result.error}`);
  }
  console.log(`price ran ${priced.length} times: ${[...priced].sort().join(" ")}`);
  const expected = Object.entries(ORDERS).flatMap(([order, items]) =>
    items.map((item) => `${order}/${item}`),
  );
  right =
    a.success &&
    b.success &&
    a.result === ORDERS.A.reduce((sum, item) => sum + PRICES[item], 0) &&
    b.result === ORDERS.B.reduce((sum, item) => sum + PRICES[item], 0) &&
    JSON.stringify([...priced].sort()) === JSON.stringify(expected.sort());
  console.log(
    right
      ? `right: each item priced once, the killed worker's order finished on worker 2 ${elapsed.toFixed(0)} ms after the kill`
      : "WRONG: a total is off or an item was priced more than once",
  );
} finally {
  await sandbox?.destroy();
  await Promise.all(workers.map((worker) => worker.stop()));
  await redis.stop();
}
process.exitCode = right ? 0 : 1;
