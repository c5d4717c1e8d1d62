import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

// The typecheck worker is its own entry, found at run time with new URL("./typecheck-worker.js", import.meta.url).
export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    "typecheck-worker": "src/typecheck-worker.ts",
  }),
);
