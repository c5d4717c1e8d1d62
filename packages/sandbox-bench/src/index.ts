export { type BenchOptions, type BenchOptionsInput, BenchOptionsSchema } from "./bench-options.js";
export { type BenchIo, type BenchOutcome, runBench } from "./run-bench.js";
