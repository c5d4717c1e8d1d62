import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig([
  // The cleaning pass of this build keeps the worker entry built next to it.
  createTsupConfig({ index: "src/index.ts" }, { clean: ["!worker-entry.cjs", "!worker-entry.cjs.map"] }),
  // The worker entry is a self-contained CommonJS script: its text is what the
  // engine passes to `new Worker(source, { eval: true })` (no ESM loader to boot;
  // the CommonJS output is strict mode).
  createTsupConfig(
    { "worker-entry": "src/worker-entry.ts" },
    { format: ["cjs"], dts: false, clean: false, splitting: false },
  ),
]);
