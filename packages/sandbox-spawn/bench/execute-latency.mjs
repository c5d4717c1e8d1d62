// Median latency of SpawnEngine.execute("2 + 3") against a raw Node cold start:
// spawn(process.execPath, ["-e", ...]) and wait for its answer and exit.
// With its pre-started child, the engine's call path holds no process boot;
// an idle gap before each call gives the replacement child time to boot, as
// between the calls of a real agent. A one-byte echo through an already
// running Node child shows the floor any process round trip pays (two
// wake-ups; large on a loaded machine). Run with: pnpm bench (builds first).
import { spawn } from "node:child_process";
import { performance } from "node:perf_hooks";
import { SpawnEngine } from "../dist/index.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const IDLE_GAP_MS = Number(process.env.BENCH_IDLE_GAP_MS ?? 300);

const warm = new SpawnEngine();
const cold = new SpawnEngine({ preStart: false });
const pause = () => new Promise((resolve) => setTimeout(resolve, IDLE_GAP_MS));
const expectFive = (result) => {
  if (result.result !== 5) throw new Error(`unexpected result ${JSON.stringify(result)}`);
};

const echo = spawn(process.execPath, ["-e", "process.stdin.on('data', (d) => process.stdout.write(d))"], {
  stdio: ["pipe", "pipe", "ignore"],
});

const candidates = {
  'raw: spawn(node, ["-e", …]) round-trip': () =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["-e", "process.stdout.write(String(2 + 3))"], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      child.on("error", reject);
      child.on("close", () => (out === "5" ? resolve() : reject(new Error(`raw child said ${out}`))));
    }),
  "floor: 1-byte echo via a running node child": () =>
    new Promise((resolve) => {
      echo.stdout.once("data", resolve);
      echo.stdin.write("x");
    }),
  'SpawnEngine.execute("2 + 3"), no spare (cold)': async () => expectFive(await cold.execute("2 + 3")),
  'SpawnEngine.execute("2 + 3"), pre-started': async () => expectFive(await warm.execute("2 + 3")),
};

const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
for (const run of Object.values(candidates)) {
  await pause();
  await run(); // warm-up
}
// Interleave the candidates so machine noise hits all of them alike.
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, run] of Object.entries(candidates)) {
    await pause();
    const start = performance.now();
    await run();
    samples[name].push(performance.now() - start);
  }
}

const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)];
const raw = quantile(samples['raw: spawn(node, ["-e", …]) round-trip'], 0.5);
console.log(`node ${process.version}, ${ROUNDS} rounds, ${IDLE_GAP_MS} ms idle gap before each call (ms):`);
for (const [name, values] of Object.entries(samples)) {
  const median = quantile(values, 0.5);
  console.log(
    `  ${name.padEnd(48)} median ${median.toFixed(2).padStart(7)}  p90 ${quantile(values, 0.9).toFixed(2).padStart(7)}  ${(median / raw).toFixed(3)}x raw`,
  );
}
echo.kill();
await Promise.all([warm.destroy(), cold.destroy()]);
