// Median latency of IsolateEngine.execute("2 + 3") against the raw isolated-vm
// floor: a fresh context on a warm isolate plus an eval of "2 + 3".
// Back-to-back calls measure the full per-execution path; calls after a short
// pause show the idle-time spare context at work. The same calls on an engine
// in helper mode (`process: "helper"`) add the IPC round trip to its process.
// Run with: pnpm bench (builds first under turbo; needs --no-node-snapshot).
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { IsolateEngine } from "../dist/index.js";

const ivm = createRequire(import.meta.url)("isolated-vm");
const WARMUP = 300;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3000);

const isolate = new ivm.Isolate({ memoryLimit: 128 });
const engine = new IsolateEngine({ process: "in-process" });
const helper = new IsolateEngine({ process: "helper" });

const pause = () => new Promise((resolve) => setTimeout(resolve, 2));
const executeOn = (target) => async () => {
  const result = await target.execute("2 + 3");
  if (result.result !== 5) throw new Error(`unexpected result ${JSON.stringify(result)}`);
};
const execute = executeOn(engine);
const executeHelper = executeOn(helper);

// Each candidate may return a "before" step run outside the timed region.
const candidates = {
  "raw: createContextSync + evalSync": () => {
    const context = isolate.createContextSync();
    context.evalSync("2 + 3");
    context.release();
  },
  "raw: createContext + eval (async)": async () => {
    const context = await isolate.createContext();
    await context.eval("2 + 3");
    context.release();
  },
  // Called again before the event loop turns: no spare context, the full path.
  'IsolateEngine.execute("2 + 3") back-to-back': { before: execute, run: execute },
  // After a pause the idle isolate has a spare context ready.
  'IsolateEngine.execute("2 + 3") after 2 ms idle': { before: pause, run: execute },
  'helper mode: execute("2 + 3") back-to-back': { before: executeHelper, run: executeHelper },
  'helper mode: execute("2 + 3") after 2 ms idle': { before: pause, run: executeHelper },
};

const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]));
const steps = (candidate) => (typeof candidate === "function" ? { run: candidate } : candidate);
for (let i = 0; i < WARMUP; i++)
  for (const candidate of Object.values(candidates)) await steps(candidate).run();
// Interleave the candidates so machine noise hits all of them alike.
for (let i = 0; i < ROUNDS; i++) {
  for (const [name, candidate] of Object.entries(candidates)) {
    const { before, run } = steps(candidate);
    if (before !== undefined) await before();
    const start = performance.now();
    await run();
    samples[name].push(performance.now() - start);
  }
}

const quantile = (values, q) => values.sort((a, b) => a - b)[Math.floor(values.length * q)];
const floor = quantile(samples["raw: createContextSync + evalSync"], 0.5);
console.log(`node ${process.version}, ${ROUNDS} rounds, medians (ms):`);
for (const [name, values] of Object.entries(samples)) {
  const median = quantile(values, 0.5);
  const p90 = quantile(values, 0.9);
  console.log(
    `  ${name.padEnd(48)} median ${median.toFixed(3)}  p90 ${p90.toFixed(3)}  ${(median / floor).toFixed(2)}x`,
  );
}

// First execution of a new engine: a new isolate in-process; the helper process's start as well in helper mode.
const COLD = 10;
for (const [name, options] of [
  ["in-process: first execute of a new engine", { process: "in-process" }],
  ["helper mode: first execute of a new engine", { process: "helper" }],
]) {
  const times = [];
  for (let i = 0; i < COLD; i++) {
    const fresh = new IsolateEngine(options);
    const start = performance.now();
    await executeOn(fresh)();
    times.push(performance.now() - start);
    await fresh.destroy();
  }
  console.log(`  ${name.padEnd(48)} median ${quantile(times, 0.5).toFixed(3)}  (${COLD} engines)`);
}
await engine.destroy();
await helper.destroy();
isolate.dispose();
