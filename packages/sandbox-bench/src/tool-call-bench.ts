import { spawn } from "node:child_process";
import { Worker } from "node:worker_threads";
import type { BuiltinEngineName, HostCalls, SandboxEngine } from "@suaveplan/sandbox-core/types";
import { loadIsolatedVm } from "./internal/isolated-vm.js";
import { median } from "./internal/measure.js";
import { loadQuickJs } from "./internal/quickjs.js";

/** A tool-call round trip of one engine against its raw message round trip, both measured in the same run. */
export interface ToolCallBenchRow {
  engine: BuiltinEngineName;
  primitive: string;
  /** Median cost of one `await tools.echo(i)` inside an execution, ms. */
  engineCallMs: number;
  /** Median cost of one raw round trip, ms. */
  rawCallMs: number;
  /** engine / raw. */
  ratio: number;
  /** `Promise.all` of 100 calls from one execution returned the right sum. */
  concurrentOk: boolean;
  skipped?: string;
}

/** Calls per sample; the per-call cost is a sample's time divided by this. */
const CALLS = 200;
const SAMPLES = 15;

const echo: HostCalls = { names: ["echo"], call: async (_name, input) => input };

/**
 * An echo that notes when the host receives each call. From one call's arrival to the next is one
 * whole round trip — the reply to the guest, the guest's next call, back to the host — and
 * nothing of the execution's start or end, which for worker and spawn (a fresh thread or child
 * per execution, ready or still booting) would otherwise swamp 200 calls.
 */
function timedEcho(): { calls: HostCalls; arrivals: number[] } {
  const arrivals: number[] = [];
  return {
    arrivals,
    calls: {
      names: ["echo"],
      call: async (_name, input) => {
        arrivals.push(performance.now());
        return input;
      },
    },
  };
}

interface RawRoundTrip {
  /** Run `n` round trips one after another. */
  run(n: number): Promise<void>;
  close(): void;
}

const raws: Record<BuiltinEngineName, { primitive: string; make: () => Promise<RawRoundTrip> }> = {
  vm: {
    primitive: "a plain host await",
    make: async () => ({
      run: async (n) => {
        const call = async (x: number) => x;
        for (let i = 0; i < n; i++) await call(i);
      },
      close: () => undefined,
    }),
  },
  worker: {
    primitive: "a reused Worker's postMessage round trip",
    make: async () => {
      const worker = new Worker(
        'const { parentPort } = require("node:worker_threads"); parentPort.on("message", (m) => parentPort.postMessage(m));',
        { eval: true },
      );
      return {
        run: async (n) => {
          for (let i = 0; i < n; i++) {
            await new Promise((resolve) => {
              worker.once("message", resolve);
              worker.postMessage(i);
            });
          }
        },
        close: () => void worker.terminate(),
      };
    },
  },
  spawn: {
    primitive: "a reused child's pipe round trip",
    make: async () => {
      const child = spawn(
        process.execPath,
        ["-e", 'process.stdin.on("data", (d) => process.stdout.write(d));'],
        { stdio: ["pipe", "pipe", "ignore"] },
      );
      return {
        run: async (n) => {
          for (let i = 0; i < n; i++) {
            await new Promise((resolve) => {
              child.stdout.once("data", resolve);
              child.stdin.write(`${i}\n`);
            });
          }
        },
        close: () => void child.kill("SIGKILL"),
      };
    },
  },
  isolate: {
    primitive: "an isolated-vm Reference async round trip",
    make: async () => {
      const ivm = loadIsolatedVm();
      const isolate = new ivm.Isolate({ memoryLimit: 64 });
      const context = isolate.createContextSync();
      context.global.setSync("echo", new ivm.Reference(async (x: number) => x));
      return {
        run: async (n) => {
          await context.eval(
            `(async () => { for (let i = 0; i < ${n}; i++) await echo.apply(undefined, [i], { result: { promise: true } }); })()`,
            { promise: true },
          );
        },
        close: () => isolate.dispose(),
      };
    },
  },
  /**
   * An async host function on quickjs-emscripten itself: the guest awaits a promise the host
   * makes (`ctx.newPromise`) and resolves on its next microtask, then runs QuickJS's pending
   * jobs — what one awaited call from QuickJS to the host costs at least.
   */
  quickjs: {
    primitive: "an awaited quickjs-emscripten host function (newPromise + executePendingJobs)",
    make: async () => {
      const qjs = await loadQuickJs();
      const rt = qjs.newRuntime();
      const ctx = rt.newContext();
      const echoHandle = ctx.newFunction("echo", (x) => {
        const value = ctx.getNumber(x);
        const deferred = ctx.newPromise();
        queueMicrotask(() => {
          const answer = ctx.newNumber(value);
          deferred.resolve(answer);
          answer.dispose();
          deferred.dispose();
          rt.executePendingJobs();
        });
        return deferred.handle;
      });
      ctx.setProp(ctx.global, "echo", echoHandle);
      echoHandle.dispose();
      return {
        run: async (n) => {
          const promise = ctx.unwrapResult(
            ctx.evalCode(`(async () => { for (let i = 0; i < ${n}; i++) await echo(i); })()`),
          );
          const settled = ctx.resolvePromise(promise);
          promise.dispose();
          rt.executePendingJobs();
          ctx.unwrapResult(await settled).dispose();
        },
        close: () => {
          ctx.dispose();
          rt.dispose();
        },
      };
    },
  },
};

/** One raw sample: a run of `CALLS` round trips minus a run of none, per round trip. */
async function rawSample(run: (n: number) => Promise<void>): Promise<number> {
  const startFull = performance.now();
  await run(CALLS);
  const full = performance.now() - startFull;
  const startEmpty = performance.now();
  await run(0);
  const empty = performance.now() - startEmpty;
  return Math.max(0, full - empty) / CALLS;
}

/** One engine sample: an execution of `CALLS` calls, per call, from the host's arrival times of the calls. */
async function engineSample(run: (n: number) => Promise<number[]>): Promise<number> {
  const arrivals = await run(CALLS);
  const first = arrivals[0] as number;
  const last = arrivals[arrivals.length - 1] as number;
  return (last - first) / (arrivals.length - 1);
}

/**
 * Medians of raw and engine samples taken in turn: a thread or pipe round trip here moves between
 * about 20 and 60 µs with the machine's state (load, clock, idle states), and alternating the two
 * lets a drift hit both alike instead of one.
 */
async function interleaved(
  raw: () => Promise<number>,
  engine: () => Promise<number>,
): Promise<{ rawCallMs: number; engineCallMs: number }> {
  await raw(); // warm-up
  await engine();
  const raws: number[] = [];
  const engines: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    raws.push(await raw());
    engines.push(await engine());
  }
  return { rawCallMs: median(raws), engineCallMs: median(engines) };
}

/**
 * Measure a tool-call round trip (`await tools.echo(i)` in a loop, inside one
 * execution) per engine against the raw message round trip of that engine's
 * transport, in the same run; and check that 100 concurrent calls from one
 * execution come back right.
 */
export async function runToolCallBench(
  engines: Partial<Record<BuiltinEngineName, () => Promise<SandboxEngine>>>,
  onRow?: (row: ToolCallBenchRow) => void,
): Promise<ToolCallBenchRow[]> {
  const rows: ToolCallBenchRow[] = [];
  for (const name of (["vm", "isolate", "worker", "spawn", "quickjs"] as const).filter(
    (engine) => engines[engine] !== undefined,
  )) {
    const { primitive, make } = raws[name];
    let row: ToolCallBenchRow;
    let engine: SandboxEngine | undefined;
    let raw: RawRoundTrip | undefined;
    try {
      raw = await make();
      engine = await (engines[name] as () => Promise<SandboxEngine>)();
      const live = engine;
      const { rawCallMs, engineCallMs } = await interleaved(
        () => rawSample((n) => (raw as RawRoundTrip).run(n)),
        () =>
          engineSample(async (n) => {
            const timed = timedEcho();
            const result = await live.execute(
              `for (let i = 0; i < ${n}; i++) await tools.echo(i); ${n}`,
              {},
              { hostCalls: timed.calls },
            );
            if (!result.success || result.result !== n)
              throw new Error(`${name}: ${JSON.stringify(result.error)}`);
            return timed.arrivals;
          }),
      );
      const concurrent = await live.execute(
        "(await Promise.all(Array.from({ length: 100 }, (_, i) => tools.echo(i)))).reduce((a, b) => a + b, 0)",
        {},
        { hostCalls: echo },
      );
      row = {
        engine: name,
        primitive,
        engineCallMs,
        rawCallMs,
        ratio: engineCallMs / rawCallMs,
        concurrentOk: concurrent.success && concurrent.result === 4950,
      };
    } catch (error) {
      row = {
        engine: name,
        primitive,
        engineCallMs: Number.NaN,
        rawCallMs: Number.NaN,
        ratio: Number.NaN,
        concurrentOk: false,
        skipped: error instanceof Error ? error.message : String(error),
      };
    } finally {
      await engine?.destroy();
      raw?.close();
    }
    rows.push(row);
    onRow?.(row);
  }
  return rows;
}

/** Render rows as a Markdown table. */
export function formatToolCallTable(rows: readonly ToolCallBenchRow[]): string {
  const fmt = (n: number, digits = 4) => (Number.isFinite(n) ? n.toFixed(digits) : "–");
  return [
    "| engine | raw round trip | tool call median (ms) | raw median (ms) | ratio | target | 100 concurrent calls |",
    "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ...rows.map((r) =>
      r.skipped
        ? `| ${r.engine} | ${r.primitive} | skipped: ${r.skipped} | | | ≤ 2× | |`
        : `| ${r.engine} | ${r.primitive} | ${fmt(r.engineCallMs)} | ${fmt(r.rawCallMs)} | ${fmt(r.ratio, 2)}× | ≤ 2× | ${r.concurrentOk ? "correct" : "WRONG"} |`,
    ),
  ].join("\n");
}
