import { z } from "zod";

/** The options of {@link runBench} as written; unknown keys are refused. */
export const BenchOptionsSchema = z.strictObject({
  /** Measured calls per latency and throughput row (W1, W2, the reuse tier). Default 200. */
  iterations: z.number().int().positive().default(200),
  /** Print the rows as one JSON object instead of the Markdown tables. Default false. */
  json: z.boolean().default(false),
});

/** {@link runBench}'s options as written (every key optional). */
export type BenchOptionsInput = z.input<typeof BenchOptionsSchema>;

/** {@link runBench}'s options resolved (defaults applied). */
export type BenchOptions = z.output<typeof BenchOptionsSchema>;
