#!/usr/bin/env node
// `pnpm memory:overshoot`: how far past `memoryLimit` a memory bomb gets before its run ends, on
// the engines that enforce the limit (worker, spawn, isolate, quickjs), measured by the kernel rather than
// by the engine's own accounting. Each cell (engine × bomb) runs in a fresh host process:
//   - worker, isolate, quickjs (in the host process): the host's peak resident memory (VmHWM, reset to
//     the current value through /proc/self/clear_refs right before the run) minus its resident
//     memory before the run;
//   - spawn (a child per run): the largest peak resident memory (VmHWM) of any process below the
//     host, polled every millisecond from a separate thread (what the last poll before the kill
//     missed is not counted).
// A benign run (`1`) is measured the same way: what an engine starts per run (its next spare)
// is in both, so the overshoot is the bomb's growth minus the benign run's minus the limit
// (spawn: the bomb child's peak minus the limit and the documented allowance for node itself).
// Linux only. Needs the built packages (`node scripts/setup.mjs`).
//
//   node scripts/memory-overshoot.mjs [--limit-mib 64] [--repeat 3] [--engines worker,spawn,isolate,quickjs] [--json]
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";

const BOMBS = {
  "benign run": "1",
  "heap objects": 'const a = []; for (;;) a.push({ n: a.length, s: String(a.length).padStart(64, "x") });',
  "1 MiB strings": 'const a = []; for (;;) a.push("x".repeat(1 << 20) + a.length);',
  "array buffers, sync": "const a = []; for (;;) a.push(new Uint8Array(1 << 20).fill(1));",
  "array buffers, yielding":
    "const a = []; for (;;) { a.push(new Uint8Array(1 << 20).fill(1)); if (a.length % 4 === 0) await new Promise((r) => setTimeout(r, 0)); }",
  "one 512 MiB buffer": "new Uint8Array(512 << 20).fill(1); 1",
  "Wasm memory":
    "const m = new WebAssembly.Memory({ initial: 16, maximum: 16384 }); for (;;) { m.grow(16); new Uint8Array(m.buffer).fill(1, m.buffer.byteLength - (1 << 20)); }",
};
const ENGINE_MODULES = {
  worker: ["@suaveplan/sandbox/worker-engine", "WorkerEngine"],
  spawn: ["@suaveplan/sandbox/spawn-engine", "SpawnEngine"],
  isolate: ["@suaveplan/sandbox/isolate-engine", "IsolateEngine"],
  quickjs: ["@suaveplan/sandbox/quickjs-engine", "QuickJsEngine"],
};
const MIB = 1024 * 1024;

const { values } = parseArgs({
  options: {
    cell: { type: "string" },
    "limit-mib": { type: "string", default: "64" },
    repeat: { type: "string", default: "3" },
    engines: { type: "string", default: "worker,spawn,isolate,quickjs" },
    json: { type: "boolean", default: false },
  },
});
const limitMiB = Number(values["limit-mib"]);
const repeat = Number(values.repeat);
if (!Number.isInteger(limitMiB) || limitMiB < 8)
  throw new Error(`--limit-mib must be an integer ≥ 8, got ${values["limit-mib"]}`);
if (!Number.isInteger(repeat) || repeat < 1)
  throw new Error(`--repeat must be a positive integer, got ${values.repeat}`);

if (values.cell !== undefined) {
  await runCell(values.cell);
} else {
  await main();
}

/** One engine × bomb in this (fresh) process; prints one JSON line. */
async function runCell(cell) {
  const { readFileSync, writeFileSync } = await import("node:fs");
  const [engineName, bombName] = cell.split("|");
  const [specifier, className] = ENGINE_MODULES[engineName];
  const Engine = (await import(specifier))[className];
  const engine = new Engine({ timeout: 10_000, memoryLimit: limitMiB * MIB });
  const status = (pid, field) => {
    try {
      const match = readFileSync(`/proc/${pid}/status`, "utf8").match(
        new RegExp(`^${field}:\\s+(\\d+) kB`, "m"),
      );
      return match === null ? 0 : Number(match[1]) * 1024;
    } catch {
      return 0; // gone
    }
  };
  await engine.execute("1"); // start-up and the first spare are not the run's
  await new Promise((resolve) => setTimeout(resolve, 200));
  let poller;
  if (engineName === "spawn") {
    const { Worker } = await import("node:worker_threads");
    const buffer = new SharedArrayBuffer(8);
    // Polls from its own thread: the host's event loop is busy reading the run's frames.
    const worker = new Worker(
      `const { parentPort, workerData } = require("node:worker_threads");
       const { readFileSync, readdirSync } = require("node:fs");
       const peak = new Int32Array(workerData);
       const kb = (pid, field) => { try { const m = readFileSync("/proc/" + pid + "/status", "utf8").match(new RegExp("^" + field + ":\\\\s+(\\\\d+) kB", "m")); return m ? Number(m[1]) : 0; } catch { return 0; } };
       const below = (root) => { const out = []; for (const name of readdirSync("/proc")) { if (!/^\\d+$/.test(name)) continue; let stat; try { stat = readFileSync("/proc/" + name + "/stat", "utf8"); } catch { continue; } const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]); out.push([Number(name), ppid]); } const tree = new Set([root]); let grew = true; while (grew) { grew = false; for (const [pid, ppid] of out) if (tree.has(ppid) && !tree.has(pid)) { tree.add(pid); grew = true; } } tree.delete(root); return [...tree]; };
       const root = ${process.pid};
       const stop = new Int32Array(workerData, 4);
       let first = true;
       while (Atomics.load(stop, 0) === 0) { for (const pid of below(root)) { const hwm = kb(pid, "VmHWM"); if (hwm > Atomics.load(peak, 0)) Atomics.store(peak, 0, hwm); } if (first) { first = false; parentPort.postMessage("polling"); } Atomics.wait(stop, 0, 0, 1); }
       parentPort.postMessage("stopped");`,
      { eval: true, workerData: buffer },
    );
    poller = { worker, buffer };
    await new Promise((resolve) => worker.once("message", resolve)); // its first scan is done
  }
  const rssBefore = status("self", "VmRSS");
  writeFileSync("/proc/self/clear_refs", "5"); // VmHWM := VmRSS
  const started = performance.now();
  const result = await engine.execute(BOMBS[bombName]);
  const ms = performance.now() - started;
  const hostPeak = status("self", "VmHWM");
  let childPeakBytes;
  if (poller !== undefined) {
    const stop = new Int32Array(poller.buffer, 4);
    Atomics.store(stop, 0, 1);
    Atomics.notify(stop, 0);
    await new Promise((resolve) => poller.worker.once("message", resolve));
    await poller.worker.terminate();
    childPeakBytes = new Int32Array(poller.buffer)[0] * 1024;
  }
  await engine.destroy();
  process.stdout.write(
    `${JSON.stringify({
      engine: engineName,
      bomb: bombName,
      outcome: result.success ? "ok" : result.errorCode,
      ms,
      hostGrowth: hostPeak - rssBefore,
      childPeak: childPeakBytes,
      memoryUsed: result.memoryUsed,
    })}\n`,
  );
}

async function main() {
  const engines = values.engines.split(",");
  const rows = [];
  const { SpawnEngine } = await import("@suaveplan/sandbox/spawn-engine");
  const probe = new SpawnEngine({});
  const allowance = probe.capabilities.memoryAccounting.allowanceBytes ?? 0;
  await probe.destroy();
  for (const engine of engines) {
    if (!(engine in ENGINE_MODULES))
      throw new Error(`--engines: unknown engine ${engine} (${Object.keys(ENGINE_MODULES).join(", ")})`);
    const samples = {};
    for (const bomb of Object.keys(BOMBS)) {
      samples[bomb] = [];
      for (let i = 0; i < repeat; i++) {
        process.stderr.write(`${engine}: ${bomb} (${i + 1}/${repeat})\n`);
        const run = spawnSync(
          process.execPath,
          [
            "--no-node-snapshot",
            new URL(import.meta.url).pathname,
            "--cell",
            `${engine}|${bomb}`,
            "--limit-mib",
            String(limitMiB),
          ],
          { encoding: "utf8", env: { MALLOC_ARENA_MAX: "2", ...process.env }, timeout: 60_000 },
        );
        const line = run.stdout.trim().split("\n").pop();
        samples[bomb].push(
          run.status === 0 && line
            ? JSON.parse(line)
            : { engine, bomb, outcome: `host process ended (${run.signal ?? `exit ${run.status}`})` },
        );
      }
    }
    // Each cell's growth over a benign run measured the same way (see the header).
    const measure = (sample) => (engine === "spawn" ? (sample.childPeak ?? 0) : (sample.hostGrowth ?? 0));
    const benign = median(samples["benign run"].filter((s) => s.ms !== undefined).map(measure));
    const bound = engine === "spawn" ? limitMiB * MIB + allowance : limitMiB * MIB;
    for (const [bomb, list] of Object.entries(samples)) {
      if (bomb === "benign run") continue;
      const measured = list.filter((s) => s.ms !== undefined);
      const growths = measured.map((s) => measure(s) - benign);
      rows.push({
        engine,
        bomb,
        outcomes: [...new Set(list.map((s) => s.outcome))].join(", "),
        runs: list.length,
        medianMs: measured.length ? median(measured.map((s) => s.ms)) : Number.NaN,
        benignMiB: benign / MIB,
        maxGrowthMiB: growths.length ? Math.max(...growths) / MIB : Number.NaN,
        boundMiB: bound / MIB,
        maxOvershootMiB: growths.length ? (Math.max(...growths) - bound) / MIB : Number.NaN,
      });
    }
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ limitMiB, repeat, rows }, null, 2)}\n`);
    return;
  }
  const fmt = (n) => (Number.isFinite(n) ? n.toFixed(1) : "–");
  process.stdout.write(
    [
      `memoryLimit ${limitMiB} MiB; ${repeat} fresh host process(es) per cell. Growth: the peak resident memory over a benign run's (see the script's header). Bound: the limit (spawn: plus the allowance for node itself). Overshoot: growth − bound; negative when the run ended below it.`,
      "",
      "| engine | bomb | outcome | median time to end (ms) | largest growth (MiB) | bound (MiB) | largest overshoot (MiB) |",
      "| --- | --- | --- | ---: | ---: | ---: | ---: |",
      ...rows.map(
        (r) =>
          `| ${r.engine} | ${r.bomb} | ${r.outcomes} | ${fmt(r.medianMs)} | ${fmt(r.maxGrowthMiB)} | ${fmt(r.boundMiB)} | ${fmt(r.maxOvershootMiB)} |`,
      ),
      "",
    ].join("\n"),
  );
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)];
}
