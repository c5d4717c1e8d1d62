#!/usr/bin/env node
// Confinement overhead, measured in one run: a bare runner exec (the argv
// computed once, then spawned each iteration) versus provider.confine + spawn
// of the same command each iteration, for `true`. The provider probes once, so
// the ratio should stay within ~10%. Runs against the built package (dist/).
//
//   pnpm bench            (after pnpm build)
//   BENCH_TEMP_ROOT=/dev/shm/x pnpm bench   (the providers' tempRoot; default os.tmpdir())
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Bench } from "tinybench";
import { LocalSandboxProvider } from "../dist/index.js";

const workspace = mkdtempSync(join(tmpdir(), "suaveplan-bench-"));
const iterations = Number(process.env.BENCH_ITERATIONS ?? 25);
const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const tempRoot = process.env.BENCH_TEMP_ROOT;
const pairs = [];

function run(argv, env) {
  const [file, ...args] = argv;
  const r = spawnSync(file, args, { stdio: "ignore", env });
  if (r.status !== 0) throw new Error(`${file} exited ${r.status ?? r.signal}`);
}

for (const backend of ["bwrap", "landlock"]) {
  const provider = new LocalSandboxProvider({ backends: [backend], ...(tempRoot ? { tempRoot } : {}) });
  const probe = provider.probe()[0];
  if (!probe?.available) {
    console.log(`${backend}: skipped (${probe?.reason ?? "not probed"})`);
    continue;
  }
  for (const mode of ["read-only", "workspace-write"]) {
    const policy = { mode, workspaceRoot: workspace };
    const fixed = provider.confine(["true"], policy);
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", ...fixed.env };
    const bare = `${backend} ${mode}: bare runner exec`;
    const confined = `${backend} ${mode}: provider.confine + spawn`;
    const bareFn = () => run(fixed.argv, env);
    const confinedFn = () => {
      const c = provider.confine(["true"], policy);
      try {
        run(c.argv, { PATH: env.PATH, ...c.env });
      } finally {
        c.dispose?.();
      }
    };
    pairs.push({
      bare,
      confined,
      bareFn,
      confinedFn,
      cleanup: () => {
        fixed.dispose?.();
        provider.dispose();
      },
    });
  }
}

// Many short rounds, alternating which task of a pair runs first, so machine
// noise and warm-up hit both sides alike; each side reports its median of medians.
const medians = new Map();
for (let round = 0; round < rounds; round++) {
  const bench = new Bench({ iterations, time: 0, warmupIterations: 3 });
  for (const pair of pairs) {
    const order = round % 2 === 0 ? ["bare", "confined"] : ["confined", "bare"];
    for (const side of order) bench.add(pair[side], pair[`${side}Fn`]);
  }
  await bench.run();
  for (const task of bench.tasks) {
    const list = medians.get(task.name) ?? [];
    list.push(task.result?.latency?.p50 ?? Number.NaN);
    medians.set(task.name, list);
  }
}
const median = (name) => {
  const sorted = [...(medians.get(name) ?? [])].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
console.log("median latency per exec (ms); ratio = confine+spawn / bare");
for (const { bare, confined, cleanup } of pairs) {
  const a = median(bare);
  const b = median(confined);
  console.log(
    `${confined.padEnd(52)} ${b?.toFixed(3)} ms vs bare ${a?.toFixed(3)} ms  ratio ${(b / a).toFixed(3)}`,
  );
  cleanup();
}
rmSync(workspace, { recursive: true, force: true });
