import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

// No code splitting: `runner-main` must be one self-contained file, because the
// child's permission model lets it read exactly that file and nothing else.
export default defineConfig(
  createTsupConfig(
    {
      index: "src/index.ts",
      "runner/index": "src/runner/index.ts",
      "runner-main": "src/runner/runner-main.ts",
    },
    { splitting: false },
  ),
);
