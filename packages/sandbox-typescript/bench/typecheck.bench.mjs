#!/usr/bin/env node
// Typecheck latency, against the built package (dist/): the first check of a
// fresh typechecker (worker start, compiler load, ES library parsed) and a warm
// check (library SourceFiles and the tools' declarations cached in the worker),
// plus stripping alone (amaro, strip-only). Medians of tinybench's p50s.
//
//   pnpm bench                  (after pnpm build)
//   BENCH_FIRST=5 BENCH_ITERATIONS=50 pnpm bench
import { Bench } from "tinybench";
import { createTypechecker, stripTypes } from "../dist/index.js";

const firstRuns = Number(process.env.BENCH_FIRST ?? 5);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 50);
const declarations = `declare const tools: {
  /** Look a user up by id */
  lookup(input: { id: string }): Promise<{ name: string; age: number }>;
};`;
const code = `interface Row { name: string; age: number }
const ids: string[] = ["1", "2", "3"];
const rows: Row[] = await Promise.all(ids.map((id) => tools.lookup({ id })));
const oldest = rows.reduce((a, b) => (a.age >= b.age ? a : b));
console.log(oldest.name);
oldest.age satisfies number;`;

const check = async (checker) => {
  const outcome = await checker.check({ code, declarations, timeoutMs: 60_000 });
  if (!outcome.ok) throw new Error(outcome.result.error);
};

const first = new Bench({ iterations: firstRuns, time: 0, warmupIterations: 0, warmup: false });
first.add("first check (fresh typechecker)", async () => {
  const checker = createTypechecker();
  try {
    await check(checker);
  } finally {
    await checker.destroy();
  }
});
// warm() as createSandbox({ typecheck: true }) calls it: the worker loads while the caller does other work.
let warmed;
first.add("first check after warm()", () => check(warmed), {
  beforeEach: async () => {
    warmed = createTypechecker();
    warmed.warm();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  },
  afterEach: () => warmed.destroy(),
});
await first.run();

const warmChecker = createTypechecker();
await check(warmChecker);
const warm = new Bench({ iterations, time: 0, warmupIterations: 5 });
warm.add("warm check (same typechecker)", () => check(warmChecker));
warm.add("stripTypes alone", () => {
  if (!stripTypes(code).ok) throw new Error("strip failed");
});
await warm.run();
await warmChecker.destroy();

console.log("median latency (ms)");
for (const task of [...first.tasks, ...warm.tasks]) {
  console.log(`${task.name.padEnd(34)} ${task.result?.latency?.p50?.toFixed(3)} ms`);
}
