import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    "testing/index": "src/testing/index.ts",
    // The worker thread's entry (not an export): started with new URL("./vm-worker.js", import.meta.url).
    "vm-worker": "src/worker/vm-worker.ts",
  }),
);
