#!/usr/bin/env node
// Confinement overhead, measured in one run: a bare runner exec (the argv
// computed once, then spawned each iteration) versus provider.confine + spawn
// of the same command each iteration, for `true`. The provider probes once, so
// the ratio should stay within ~10%. Runs against the built package (dist/).
//
//   pnpm bench            (after pnpm build)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Bench } from "tinybench";
import { LocalSandboxProvider } from "../dist/index.js";

const workspace = mkdtempSync(join(tmpdir(), "suaveplan-bench-"));
const iterations = Number(process.env.BENCH_ITERATIONS ?? 200);
const bench = new Bench({ iterations, time: 0, warmupIterations: 20 });
const pairs = [];

function run(argv, env) {
  const [file, ...args] = argv;
  const r = spawnSync(file, args, { stdio: "ignore", env });
  if (r.status !== 0) throw new Error(`${file} exited ${r.status ?? r.signal}`);
}

for (const backend of ["bwrap", "landlock"]) {
  const provider = new LocalSandboxProvider({ backends: [backend] });
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
    bench.add(bare, () => run(fixed.argv, env));
    bench.add(confined, () => {
      const c = provider.confine(["true"], policy);
      try {
        run(c.argv, { PATH: env.PATH, ...c.env });
      } finally {
        c.dispose?.();
      }
    });
    pairs.push({
      bare,
      confined,
      cleanup: () => {
        fixed.dispose?.();
        provider.dispose();
      },
    });
  }
}

await bench.run();
const median = (name) => bench.tasks.find((t) => t.name === name)?.result?.latency?.p50;
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
