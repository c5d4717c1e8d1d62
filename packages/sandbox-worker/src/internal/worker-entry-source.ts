import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

let cached: URL | undefined;

/**
 * The built worker entry. In the published package the engine code sits in
 * `dist/` next to `worker-entry.js`; when the engine runs from `src/` (tests
 * in this repo) the entry is taken from the package's `dist/` (run
 * `pnpm build` first). Returns `undefined` when neither exists.
 */
export function locateWorkerEntry(): URL | undefined {
  if (cached !== undefined) return cached;
  const candidates = [
    new URL("./worker-entry.js", import.meta.url),
    new URL("../../dist/worker-entry.js", import.meta.url),
  ];
  cached = candidates.find((candidate) => existsSync(fileURLToPath(candidate)));
  return cached;
}
