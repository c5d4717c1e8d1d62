import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    // The helper process's entry (helper mode), found next to index.js with `new URL`.
    "isolate-helper": "src/isolate-helper/isolate-helper-main.ts",
  }),
);
