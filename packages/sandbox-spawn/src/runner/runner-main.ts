import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { main } from "./child-main.js";

/**
 * The script SpawnEngine spawns (`dist/runner-main.js`, one self-contained
 * build entry with the shared guest runtime bundled in, so the child may read
 * this one file only). Importing it does nothing: it runs only as the
 * process's main module.
 */
function isMainModule(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  const self = fileURLToPath(import.meta.url);
  if (entry === self) return true;
  try {
    return realpathSync(entry) === self;
  } catch {
    return false;
  }
}

if (isMainModule()) {
  main().catch((error: unknown) => {
    process.stderr.write(`runner: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(70);
  });
}
