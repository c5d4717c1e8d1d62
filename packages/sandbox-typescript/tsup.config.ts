import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

// The typecheck child is its own entry, found at run time with new URL("./typecheck-child.js", import.meta.url).
export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    "typecheck-child": "src/typecheck-child.ts",
  }),
);
