#!/usr/bin/env node
// Latency of WorkerEngine.execute("2 + 3") against a raw worker cold start,
// measured in the same run. Needs the build (`pnpm build`); run with
// `pnpm bench` from packages/sandbox-worker.
//
// - raw cold start: `new Worker(code, { eval: true })` until its first message
// - warm execute: engine.execute("2 + 3") after an idle gap (the pre-started
//   spare worker has booted), i.e. what a caller normally sees
// - cold execute: the same call with a per-call memoryLimit that differs from
//   the engine's, which bypasses the spare and starts a worker on the call path
import { Worker } from "node:worker_threads";
import { WorkerEngine } from "../dist/index.js";

const RUNS = Number(process.env.RUNS ?? 25);
const IDLE_GAP_MS = Number(process.env.IDLE_GAP_MS ?? 200);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (ms) => Math.round(ms * 100) / 100;

async function rawColdStart() {
  const started = performance.now();
  const worker = new Worker("require('node:worker_threads').parentPort.postMessage(0)", { eval: true });
  await new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  const elapsed = performance.now() - started;
  await worker.terminate();
  return elapsed;
}

async function timedExecute(engine, options) {
  const started = performance.now();
  const result = await engine.execute("2 + 3", undefined, options);
  const elapsed = performance.now() - started;
  if (!result.success || result.result !== 5) throw new Error(`unexpected result: ${JSON.stringify(result)}`);
  return elapsed;
}

const raw = [];
const warm = [];
const cold = [];
const engine = new WorkerEngine();
try {
  await timedExecute(engine); // load the entry once (module cache), not counted
  for (let i = 0; i < RUNS; i++) {
    await sleep(IDLE_GAP_MS);
    raw.push(await rawColdStart());
    await sleep(IDLE_GAP_MS);
    warm.push(await timedExecute(engine));
    await sleep(IDLE_GAP_MS);
    cold.push(await timedExecute(engine, { memoryLimit: 96 * 1024 * 1024 }));
  }
} finally {
  await engine.destroy();
}

const report = {
  node: process.version,
  runs: RUNS,
  idleGapMs: IDLE_GAP_MS,
  medianRawWorkerColdStartMs: round(median(raw)),
  medianWarmExecuteMs: round(median(warm)),
  medianColdExecuteMs: round(median(cold)),
  warmOverRawColdStart: round(median(warm) / median(raw)),
};
console.log(JSON.stringify(report, null, 2));
