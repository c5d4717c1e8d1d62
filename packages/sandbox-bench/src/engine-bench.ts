import { spawn } from "node:child_process";
import * as vm from "node:vm";
import { Worker } from "node:worker_threads";
import type { BuiltinEngineName, EngineName, SandboxEngine } from "@suaveplan/sandbox-core/types";
import { loadIsolatedVm } from "./internal/isolated-vm.js";
import { latencyMedian, throughput } from "./internal/measure.js";
import { evalInFreshContext, loadQuickJs } from "./internal/quickjs.js";

/** One measured engine against its raw primitive, both measured in the same run. */
export interface EngineBenchRow {
  engine: EngineName;
  primitive: string;
  /** Median latency of `engine.execute("2 + 3")` with an idle gap before each call, ms. */
  engineLatencyMs: number;
  /** Median latency of the raw primitive under the same gap, ms. */
  rawLatencyMs: number;
  /** engine / raw. */
  latencyRatio: number;
  /** The target the ratio is held to. */
  target: string;
  /** Back-to-back calls per second with 8 concurrent callers. */
  engineThroughput: number;
  rawThroughput: number;
  /** Why a row was skipped (e.g. isolated-vm not installed). */
  skipped?: string;
}

/** Options of {@link runEngineBench}. */
export interface EngineBenchOptions {
  /** Measured calls per latency row. */
  iterations: number;
  /** Engines to measure (default all five). */
  engines?: readonly BuiltinEngineName[];
  /** Called as each row completes. */
  onRow?: (row: EngineBenchRow) => void;
}

const CODE = "2 + 3";
const CONCURRENCY = 8;

interface Subject {
  primitive: string;
  target: string;
  /** Idle gap before each latency sample, ms: long enough for single-use spares to restart. */
  idleMs: number;
  engine: () => Promise<SandboxEngine>;
  raw: () => Promise<{ call: () => Promise<unknown>; close: () => void }>;
}

const subjects: Record<BuiltinEngineName, Subject> = {
  vm: {
    primitive: 'vm.runInNewContext("2 + 3")',
    target: "≤ 1.5×",
    idleMs: 2,
    engine: async () => new (await import("@suaveplan/sandbox/vm-engine")).VmEngine({}),
    raw: async () => ({ call: async () => vm.runInNewContext(CODE), close: () => undefined }),
  },
  isolate: {
    primitive: "new context on a warm isolated-vm isolate",
    target: "≤ 1.5×",
    idleMs: 2,
    engine: async () => new (await import("@suaveplan/sandbox/isolate-engine")).IsolateEngine({}),
    raw: async () => {
      const ivm = loadIsolatedVm();
      const isolate = new ivm.Isolate({ memoryLimit: 128 });
      return {
        call: async () => {
          const context = isolate.createContextSync();
          try {
            return context.evalSync(CODE);
          } finally {
            context.release();
          }
        },
        close: () => isolate.dispose(),
      };
    },
  },
  worker: {
    primitive: "new Worker round-trip",
    target: "≤ 0.1× (no cold start on the caller's path)",
    idleMs: 150,
    engine: async () => new (await import("@suaveplan/sandbox/worker-engine")).WorkerEngine({}),
    raw: async () => ({
      call: () =>
        new Promise((resolve, reject) => {
          const worker = new Worker(`require("node:worker_threads").parentPort.postMessage(${CODE})`, {
            eval: true,
          });
          worker.once("message", (value) => {
            void worker.terminate().then(() => resolve(value));
          });
          worker.once("error", reject);
        }),
      close: () => undefined,
    }),
  },
  spawn: {
    primitive: "spawn(process.execPath) round-trip",
    target: "≤ 0.1× (no cold start on the caller's path)",
    idleMs: 250,
    engine: async () => new (await import("@suaveplan/sandbox/spawn-engine")).SpawnEngine({}),
    raw: async () => ({
      call: () =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, ["-e", `process.stdout.write(String(${CODE}))`], {
            stdio: ["ignore", "pipe", "ignore"],
          });
          let out = "";
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString();
          });
          child.once("error", reject);
          child.once("close", () => resolve(out));
        }),
      close: () => undefined,
    }),
  },
  /** quickjs-emscripten on its own: one module instance, and a fresh runtime and context per call. */
  quickjs: {
    primitive: "new quickjs-emscripten runtime + context per call",
    target: "≤ 1.5×",
    idleMs: 2,
    engine: async () => new (await import("@suaveplan/sandbox/quickjs-engine")).QuickJsEngine({}),
    raw: async () => {
      const qjs = await loadQuickJs();
      return {
        call: async () => evalInFreshContext(qjs, CODE, (ctx, value) => ctx.getNumber(value)),
        close: () => undefined,
      };
    },
  },
};

/** The engine a bench row measures, built the way the row builds it. */
export function makeBenchEngine(name: BuiltinEngineName): Promise<SandboxEngine> {
  return subjects[name].engine();
}

/** The raw primitive a bench row measures `name` against (for worker and spawn: a cold start per call). */
export function makeRawPrimitive(
  name: BuiltinEngineName,
): Promise<{ primitive: string; call: () => Promise<unknown>; close: () => void }> {
  const subject = subjects[name];
  return subject.raw().then((raw) => ({ primitive: subject.primitive, ...raw }));
}

/** Measure every engine and its raw primitive in the same process, row by row. */
export async function runEngineBench(options: EngineBenchOptions): Promise<EngineBenchRow[]> {
  const rows: EngineBenchRow[] = [];
  for (const name of options.engines ?? (["vm", "isolate", "worker", "spawn", "quickjs"] as const)) {
    const subject = subjects[name];
    const iterations =
      name === "worker" || name === "spawn"
        ? Math.max(20, Math.floor(options.iterations / 4))
        : options.iterations;
    let row: EngineBenchRow;
    try {
      row = await measure(name, subject, iterations);
    } catch (error) {
      row = {
        engine: name,
        primitive: subject.primitive,
        target: subject.target,
        engineLatencyMs: Number.NaN,
        rawLatencyMs: Number.NaN,
        latencyRatio: Number.NaN,
        engineThroughput: Number.NaN,
        rawThroughput: Number.NaN,
        skipped: error instanceof Error ? error.message : String(error),
      };
    }
    rows.push(row);
    options.onRow?.(row);
  }
  return rows;
}

async function measure(name: EngineName, subject: Subject, iterations: number): Promise<EngineBenchRow> {
  const raw = await subject.raw();
  const engine = await subject.engine();
  try {
    const execute = async () => {
      const result = await engine.execute(CODE);
      if (!result.success || result.result !== 5)
        throw new Error(`${name} engine returned ${JSON.stringify(result)}`);
      return result;
    };
    const rawLatencyMs = await latencyMedian(raw.call, iterations, subject.idleMs);
    const engineLatencyMs = await latencyMedian(execute, iterations, subject.idleMs);
    const total = iterations * 2;
    const rawThroughput = await throughput(raw.call, total, CONCURRENCY);
    const engineThroughput = await throughput(execute, total, CONCURRENCY);
    return {
      engine: name,
      primitive: subject.primitive,
      target: subject.target,
      engineLatencyMs,
      rawLatencyMs,
      latencyRatio: engineLatencyMs / rawLatencyMs,
      engineThroughput,
      rawThroughput,
    };
  } finally {
    await engine.destroy();
    raw.close();
  }
}

/** Render rows as a Markdown table (the same table goes into the READMEs). */
export function formatBenchTable(rows: readonly EngineBenchRow[]): string {
  const header =
    "| engine | raw primitive | engine median (ms) | raw median (ms) | ratio | target | engine calls/s (8 callers) | raw calls/s (8 callers) |";
  const rule = "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: |";
  const fmt = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
  const lines = rows.map((r) =>
    r.skipped
      ? `| ${r.engine} | ${r.primitive} | skipped: ${r.skipped} | | | ${r.target} | | |`
      : `| ${r.engine} | ${r.primitive} | ${fmt(r.engineLatencyMs)} | ${fmt(r.rawLatencyMs)} | ${fmt(r.latencyRatio, 2)}× | ${r.target} | ${fmt(r.engineThroughput, 0)} | ${fmt(r.rawThroughput, 0)} |`,
  );
  return [header, rule, ...lines].join("\n");
}
