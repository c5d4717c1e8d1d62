import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { W2_CODE, W2_DATA } from "./data-path-bench.js";

/** Resident memory of one engine against its raw primitive, each measured in a fresh process of its own. */
export interface MemoryBenchRow {
  engine: "vm" | "isolate";
  primitive: string;
  /** Resident memory loading the engine's modules adds to a fresh process (after a GC), bytes. */
  engineLoadBytes: number;
  rawLoadBytes: number;
  /** Resident memory one idle engine adds after that (made, run once, GC'd), bytes. */
  engineIdleBytes: number;
  rawIdleBytes: number;
  /** Growth of resident memory over `runs` sequential W2 executions after that, with a GC before each reading, bytes. */
  engineGrowthBytes: number;
  rawGrowthBytes: number;
  /** The process's resident memory after the runs and a GC, engine / raw. */
  ratio: number;
  runs: number;
  target: string;
  skipped?: string;
}

interface Sample {
  before: number;
  loaded: number;
  idle: number;
  after: number;
}

/**
 * The script a measuring process runs: a GC'd baseline, the subject's modules
 * loaded, the subject made and run once (idle), then `runs` W2 executions;
 * each reading after a GC of the host heap (an isolated-vm isolate's own heap
 * is collected by V8 on its own schedule).
 * It runs from this package's directory, so its imports resolve to the built
 * packages as this package's do.
 */
function script(subject: "vm" | "vm-raw" | "isolate" | "isolate-raw", runs: number): string {
  return `
const code = ${JSON.stringify(W2_CODE)};
const data = ${JSON.stringify(W2_DATA)};
const rss = () => { globalThis.gc(); globalThis.gc(); return process.memoryUsage.rss(); };
const before = rss();
const subject = ${JSON.stringify(subject)};
const modules =
  subject === "vm" ? await import("@suaveplan/sandbox/vm-engine")
  : subject === "isolate" ? await import("@suaveplan/sandbox/isolate-engine")
  : subject === "vm-raw" ? await import("node:vm")
  : (await import("node:module")).createRequire(import.meta.url)("isolated-vm");
const loaded = rss();
let run, close = async () => {};
if (subject === "vm" || subject === "isolate") {
  const engine = subject === "vm" ? new modules.VmEngine({}) : new modules.IsolateEngine({ process: "in-process" });
  run = async () => { const r = await engine.execute(code, { data }); if (!r.success) throw new Error(r.error); };
  close = () => engine.destroy();
} else if (subject === "vm-raw") {
  run = async () => modules.runInNewContext(code, { data });
} else {
  const isolate = new modules.Isolate({ memoryLimit: 128 });
  run = async () => {
    const context = isolate.createContextSync();
    try { context.global.setSync("data", data); context.evalSync(code, { copy: true }); } finally { context.release(); }
  };
  close = () => isolate.dispose();
}
await run();
const idle = rss();
for (let i = 0; i < ${runs}; i++) await run();
// Let isolated-vm dispose released contexts (it does so on the isolate's thread, later).
await new Promise((done) => setTimeout(done, 100));
const after = rss();
await close();
process.stdout.write(JSON.stringify({ before, loaded, idle, after }));
`;
}

function measure(subject: "vm" | "vm-raw" | "isolate" | "isolate-raw", runs: number): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", "--no-node-snapshot", "--input-type=module", "-e", script(subject, runs)],
      {
        stdio: ["ignore", "pipe", "pipe"],
        cwd: fileURLToPath(new URL(".", import.meta.url)),
        // Without NODE_OPTIONS: a test runner's resolve conditions would load sources, not builds.
        env: Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS")),
      },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      if (code !== 0)
        reject(
          new Error(
            `the ${subject} measurement exited ${code}: ${err.trim().split("\n").slice(0, 6).join(" / ")}`,
          ),
        );
      else resolve(JSON.parse(out) as Sample);
    });
  });
}

/**
 * Resident memory per idle engine and after `runs` sequential W2 executions,
 * on vm and isolate (in-process) against their raw primitives: each in a
 * fresh process, so no measurement inherits another's heap or allocator.
 */
export async function runMemoryBench(options: {
  runs: number;
  onRow?: (row: MemoryBenchRow) => void;
}): Promise<MemoryBenchRow[]> {
  const rows: MemoryBenchRow[] = [];
  const subjects = [
    ["vm", "vm.runInNewContext(W2, { data })"],
    ["isolate", "new context on a warm isolated-vm isolate"],
  ] as const;
  for (const [engine, primitive] of subjects) {
    const base = { engine, primitive, runs: options.runs, target: "≤ 1.2× (resident memory after the runs)" };
    let row: MemoryBenchRow;
    try {
      const ours = await measure(engine, options.runs);
      const raw = await measure(`${engine}-raw`, options.runs);
      row = {
        ...base,
        engineLoadBytes: ours.loaded - ours.before,
        rawLoadBytes: raw.loaded - raw.before,
        engineIdleBytes: ours.idle - ours.loaded,
        rawIdleBytes: raw.idle - raw.loaded,
        engineGrowthBytes: ours.after - ours.idle,
        rawGrowthBytes: raw.after - raw.idle,
        ratio: ours.after / raw.after,
      };
    } catch (error) {
      row = {
        ...base,
        engineLoadBytes: Number.NaN,
        rawLoadBytes: Number.NaN,
        engineIdleBytes: Number.NaN,
        rawIdleBytes: Number.NaN,
        engineGrowthBytes: Number.NaN,
        rawGrowthBytes: Number.NaN,
        ratio: Number.NaN,
        skipped: error instanceof Error ? error.message : String(error),
      };
    }
    rows.push(row);
    options.onRow?.(row);
  }
  return rows;
}

/** Render rows as a Markdown table (MiB). */
export function formatMemoryTable(rows: readonly MemoryBenchRow[]): string {
  const header =
    "| engine | raw primitive | modules loaded, engine / raw (MiB) | one idle sandbox, engine / raw (MiB) | growth over the runs, engine / raw (MiB) | resident after, ratio | target |";
  const rule = "| --- | --- | ---: | ---: | ---: | ---: | --- |";
  const mib = (n: number) => (Number.isFinite(n) ? (n / 1024 / 1024).toFixed(1) : "–");
  const lines = rows.map((r) =>
    r.skipped
      ? `| ${r.engine} | ${r.primitive} | skipped: ${r.skipped} | | | | ${r.target} |`
      : `| ${r.engine} | ${r.primitive} | ${mib(r.engineLoadBytes)} / ${mib(r.rawLoadBytes)} | ${mib(r.engineIdleBytes)} / ${mib(r.rawIdleBytes)} | ${mib(r.engineGrowthBytes)} / ${mib(r.rawGrowthBytes)} | ${Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : "–"}× | ${r.target} |`,
  );
  return [header, rule, ...lines].join("\n");
}
