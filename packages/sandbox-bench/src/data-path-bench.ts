import * as vm from "node:vm";
import type { SandboxEngine } from "@suaveplan/sandbox-core/types";
import { loadIsolatedVm } from "./internal/isolated-vm.js";
import { latencyMedian, throughput } from "./internal/measure.js";
import { evalInFreshContext, loadQuickJs } from "./internal/quickjs.js";

/** The data path (W2) of one engine against its raw primitive, both measured in the same run. */
export interface DataPathBenchRow {
  engine: "vm" | "isolate" | "quickjs";
  primitive: string;
  /** Median latency of the W2 execution after an idle gap, ms. */
  engineLatencyMs: number;
  rawLatencyMs: number;
  /** engine / raw latency. */
  latencyRatio: number;
  /** Back-to-back calls per second with 8 concurrent callers. */
  engineThroughput: number;
  rawThroughput: number;
  /** engine / raw calls per second. */
  throughputRatio: number;
  target: string;
  skipped?: string;
}

/** W2's input: 400 rows of JSON (about 14 KB), passed in through `context` as one string. */
export const W2_DATA = JSON.stringify(
  Array.from({ length: 400 }, (_, i) => ({ id: i, group: `g${i % 7}`, amount: (i * 37) % 101 })),
);
/** W2: parse the string, group and sum, return a small object. */
export const W2_CODE =
  "const rows = JSON.parse(data); const out = {}; for (const r of rows) out[r.group] = (out[r.group] ?? 0) + r.amount; out";
const EXPECTED = JSON.stringify(vm.runInNewContext(W2_CODE, { data: W2_DATA }));

const CONCURRENCY = 8;
const IDLE_MS = 2;

const subjects = {
  vm: {
    primitive: "vm.runInNewContext(W2, { data })",
    engine: async (): Promise<SandboxEngine> =>
      new (await import("@suaveplan/sandbox/vm-engine")).VmEngine({}),
    raw: async () => ({
      call: async () => vm.runInNewContext(W2_CODE, { data: W2_DATA }),
      close: () => undefined,
    }),
  },
  isolate: {
    primitive: "new context on a warm isolated-vm isolate, data set as a string, result copied",
    engine: async (): Promise<SandboxEngine> =>
      new (await import("@suaveplan/sandbox/isolate-engine")).IsolateEngine({}),
    raw: async () => {
      const ivm = loadIsolatedVm();
      const isolate = new ivm.Isolate({ memoryLimit: 128 });
      return {
        call: async () => {
          const context = isolate.createContextSync();
          try {
            context.global.setSync("data", W2_DATA);
            return context.evalSync(W2_CODE, { copy: true });
          } finally {
            context.release();
          }
        },
        close: () => isolate.dispose(),
      };
    },
  },
  /** One quickjs-emscripten module instance; per call a fresh runtime and context, `data` set as a string, the result dumped out. */
  quickjs: {
    primitive: "new quickjs-emscripten runtime + context per call, data set as a string, result dumped",
    engine: async (): Promise<SandboxEngine> =>
      new (await import("@suaveplan/sandbox/quickjs-engine")).QuickJsEngine({}),
    raw: async () => {
      const qjs = await loadQuickJs();
      return {
        call: async () =>
          evalInFreshContext(qjs, W2_CODE, (ctx, value) => ctx.dump(value) as unknown, { data: W2_DATA }),
        close: () => undefined,
      };
    },
  },
};

/** Measure W2 on vm, isolate and quickjs against their raw primitives, row by row, in one process. */
export async function runDataPathBench(options: {
  iterations: number;
  onRow?: (row: DataPathBenchRow) => void;
}): Promise<DataPathBenchRow[]> {
  const rows: DataPathBenchRow[] = [];
  for (const name of ["vm", "isolate", "quickjs"] as const) {
    const subject = subjects[name];
    const base = { engine: name, primitive: subject.primitive, target: "≤ 1.2× (latency)" };
    let row: DataPathBenchRow;
    try {
      const raw = await subject.raw();
      const engine = await subject.engine();
      try {
        const rawCall = async () => {
          const value = await raw.call();
          if (JSON.stringify(value) !== EXPECTED)
            throw new Error(`raw ${name} returned ${JSON.stringify(value)}`);
        };
        const execute = async () => {
          const result = await engine.execute(W2_CODE, { data: W2_DATA });
          if (!result.success || JSON.stringify(result.result) !== EXPECTED)
            throw new Error(`${name} engine returned ${JSON.stringify(result)}`);
        };
        const rawLatencyMs = await latencyMedian(rawCall, options.iterations, IDLE_MS);
        const engineLatencyMs = await latencyMedian(execute, options.iterations, IDLE_MS);
        const rawThroughput = await throughput(rawCall, options.iterations * 4, CONCURRENCY);
        const engineThroughput = await throughput(execute, options.iterations * 4, CONCURRENCY);
        row = {
          ...base,
          engineLatencyMs,
          rawLatencyMs,
          latencyRatio: engineLatencyMs / rawLatencyMs,
          engineThroughput,
          rawThroughput,
          throughputRatio: engineThroughput / rawThroughput,
        };
      } finally {
        await engine.destroy();
        raw.close();
      }
    } catch (error) {
      row = {
        ...base,
        engineLatencyMs: Number.NaN,
        rawLatencyMs: Number.NaN,
        latencyRatio: Number.NaN,
        engineThroughput: Number.NaN,
        rawThroughput: Number.NaN,
        throughputRatio: Number.NaN,
        skipped: error instanceof Error ? error.message : String(error),
      };
    }
    rows.push(row);
    options.onRow?.(row);
  }
  return rows;
}

/** Render rows as a Markdown table. */
export function formatDataPathTable(rows: readonly DataPathBenchRow[]): string {
  const header =
    "| engine (W2) | raw primitive | engine median (ms) | raw median (ms) | ratio | target | engine calls/s (8 callers) | raw calls/s (8 callers) | ratio |";
  const rule = "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: |";
  const fmt = (n: number, digits = 3) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
  const lines = rows.map((r) =>
    r.skipped
      ? `| ${r.engine} | ${r.primitive} | skipped: ${r.skipped} | | | ${r.target} | | | |`
      : `| ${r.engine} | ${r.primitive} | ${fmt(r.engineLatencyMs)} | ${fmt(r.rawLatencyMs)} | ${fmt(r.latencyRatio, 2)}× | ${r.target} | ${fmt(r.engineThroughput, 0)} | ${fmt(r.rawThroughput, 0)} | ${fmt(r.throughputRatio, 2)}× |`,
  );
  return [header, rule, ...lines].join("\n");
}
