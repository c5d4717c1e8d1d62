import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { MEMORY_SAMPLE_MS, RESIDENT_ALLOWANCE_BYTES, watchResidentMemory } from "./watch-worker-memory.js";

const MiB = 1024 * 1024;
/**
 * Touches 256 MiB of array buffers, then spins (never yields); or touches them 4 MiB at a time
 * (a few ms each) with a 15 ms wait between, then waits (a worker waiting in a poll accrues idle time).
 */
const hoarder = (how: "sync" | "yielding") => `
  const { parentPort } = require("node:worker_threads");
  const hoard = [];
  (async () => {
    for (let i = 0; i < 64; i++) {
      hoard.push(new Uint8Array(4 * 1024 * 1024).fill(1));
      ${how === "yielding" ? "await new Promise((resolve) => setTimeout(resolve, 15));" : ""}
    }
    parentPort.postMessage("hoarded");
    ${how === "sync" ? "for (;;) {}" : "setInterval(() => hoard.length, 1000);"}
  })();`;

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.terminate()));
});

function start(how: "sync" | "yielding"): Worker {
  const worker = new Worker(hoarder(how), { eval: true });
  workers.push(worker);
  return worker;
}

describe("watchResidentMemory", () => {
  it("ends a worker that grew the process past its limit plus the allowance without yielding, once", async () => {
    const worker = start("sync");
    const calls: number[] = [];
    const stop = watchResidentMemory(worker, 16 * MiB, (grown) => calls.push(grown));
    await once(worker, "message");
    const deadline = Date.now() + 10_000;
    while (calls.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, MEMORY_SAMPLE_MS));
    await new Promise((r) => setTimeout(r, 5 * MEMORY_SAMPLE_MS));
    stop();
    stop();
    expect({
      calls: calls.length,
      pastAllowance: (calls[0] ?? 0) > 16 * MiB + RESIDENT_ALLOWANCE_BYTES,
    }).toEqual({
      calls: 1,
      pastAllowance: true,
    });
  });

  it("leaves a worker that yields in every sampling interval to its own sampler, however far the process grew", async () => {
    const worker = start("yielding");
    const calls: number[] = [];
    const stop = watchResidentMemory(worker, 16 * MiB, (grown) => calls.push(grown));
    await once(worker, "message");
    await new Promise((r) => setTimeout(r, 10 * MEMORY_SAMPLE_MS));
    stop();
    expect(calls).toEqual([]);
  });
});
