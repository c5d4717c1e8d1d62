import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    // Not exported: scripts/build-launcher.mjs compiles the launcher with it.
    "launcher-compile": "src/landlock/launcher-compile.ts",
  }),
);
