import { availableParallelism } from "node:os";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { describeZodError } from "@suaveplan/sandbox-core/schemas";
import { z } from "zod";
import type { ReuseSettings } from "./worker-pool.js";

/** `WorkerEngineOptions.reuse` as users write it. */
export type ReuseOption = boolean | { workers?: number | undefined; runsPerWorker?: number | undefined };

/** Runs a reused worker serves by default before it is replaced. */
export const DEFAULT_RUNS_PER_WORKER = 1000;

const ReuseSchema = z.strictObject({
  workers: z.number().int().min(1).max(64).optional(),
  runsPerWorker: z.number().int().min(1).max(1_000_000).optional(),
});

/**
 * Check `reuse` and apply its defaults: `undefined` when the tier is off.
 * Workers default to the machine's parallelism, at most 4.
 * @throws SandboxError `SANDBOX_INVALID_CONFIG` naming the field and the reason.
 */
export function parseReuseOption(input: unknown): ReuseSettings | undefined {
  if (input === undefined || input === false) return undefined;
  if (input !== true && (input === null || typeof input !== "object")) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid WorkerEngine option reuse: expected true, false or { workers, runsPerWorker } (got ${typeof input === "string" ? JSON.stringify(input) : String(input)})`,
    );
  }
  const parsed = ReuseSchema.safeParse(input === true ? {} : input);
  if (!parsed.success) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `Invalid WorkerEngine option ${describeZodError(parsed.error, "reuse", input)}`,
    );
  }
  return Object.freeze({
    workers: parsed.data.workers ?? Math.min(4, availableParallelism()),
    runsPerWorker: parsed.data.runsPerWorker ?? DEFAULT_RUNS_PER_WORKER,
  });
}
