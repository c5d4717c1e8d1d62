import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    bin: "src/bin.ts",
  }),
);
