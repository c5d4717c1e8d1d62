// Median latency of VmEngine.execute("2 + 3") against a raw vm.runInNewContext("2 + 3"),
// both measured in this one run, interleaved so machine load affects them alike.
// "2 + 3" is a provably bounded pure expression, which VmEngine runs without node's
// per-call timeout watchdog; "Math.max(2, 3)" (a call) shows the cost with the watchdog.
// Run with: pnpm bench (builds first). BENCH_ROUNDS sets the sample count (default 500).
import { performance } from "node:perf_hooks";
import vm from "node:vm";
import { VmEngine } from "../dist/index.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 500);
const WARMUP = 50;
const engine = new VmEngine();

const raw = () => {
  if (vm.runInNewContext("2 + 3") !== 5) throw new Error("raw vm returned the wrong value");
};
const viaEngine = async () => {
  const result = await engine.execute("2 + 3");
  if (result.result !== 5) throw new Error(`engine returned ${JSON.stringify(result)}`);
};
const viaEngineWatchdog = async () => {
  const result = await engine.execute("Math.max(2, 3)");
  if (result.result !== 3) throw new Error(`engine returned ${JSON.stringify(result)}`);
};

const median = (samples) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

for (let i = 0; i < WARMUP; i++) {
  raw();
  await viaEngine();
  await viaEngineWatchdog();
}
const rawSamples = [];
const engineSamples = [];
const watchdogSamples = [];
for (let i = 0; i < ROUNDS; i++) {
  let start = performance.now();
  raw();
  rawSamples.push(performance.now() - start);
  start = performance.now();
  await viaEngine();
  engineSamples.push(performance.now() - start);
  start = performance.now();
  await viaEngineWatchdog();
  watchdogSamples.push(performance.now() - start);
}
await engine.destroy();

const rawMedian = median(rawSamples);
const engineMedian = median(engineSamples);
const watchdogMedian = median(watchdogSamples);
const rows = [
  ['raw vm.runInNewContext("2 + 3")', rawMedian],
  ['VmEngine.execute("2 + 3")', engineMedian],
  ['VmEngine.execute("Math.max(2, 3)")', watchdogMedian],
];
console.log(`median over ${ROUNDS} runs (node ${process.version})`);
for (const [name, ms] of rows) console.log(`  ${name.padEnd(36)} ${(ms * 1000).toFixed(0).padStart(6)} µs`);
console.log(`  ratio "2 + 3" engine / raw          ${(engineMedian / rawMedian).toFixed(2)}×`);
console.log(`  ratio with the watchdog / raw       ${(watchdogMedian / rawMedian).toFixed(2)}×`);
