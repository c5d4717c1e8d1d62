import { readFileSync } from "node:fs";

let cached: string | undefined;

/**
 * The source text of the built worker entry (`worker-entry.cjs`, a
 * self-contained CommonJS script), which the engine hands to
 * `new Worker(source, { eval: true })`. In the published package it sits in
 * `dist/` next to the engine code; when the engine runs from `src/` (tests in
 * this repo) it is taken from the package's `dist/` (run `pnpm build` first).
 * Read once, then cached. Returns `undefined` when neither file exists.
 */
export function workerEntrySource(): string | undefined {
  if (cached !== undefined) return cached;
  for (const candidate of [
    new URL("./worker-entry.cjs", import.meta.url),
    new URL("../../dist/worker-entry.cjs", import.meta.url),
  ]) {
    try {
      cached = readFileSync(candidate, "utf8");
      return cached;
    } catch {
      // try the next location
    }
  }
  return undefined;
}
