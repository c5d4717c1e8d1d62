import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

/** Bundled into the CLI so tree-shaking keeps only what `exec` uses (the sanitiser, not all of sandbox-spawn). */
const BUNDLED = ["@suaveplan/dsh-bash-sandbox", "@suaveplan/sandbox-spawn"];

export default defineConfig(
  createTsupConfig(
    {
      index: "src/index.ts",
      bin: "src/bin.ts",
    },
    {
      // Start-up: packages that find files beside their own module (the
      // Landlock launcher, worker and runner entries) stay external.
      // They are bundled from their sources (the `@suaveplan/source` condition),
      // so esbuild drops every module `exec` does not use — sandbox-spawn's
      // dist is one file whose imports (sandbox-core's Zod schemas) would all load.
      noExternal: BUNDLED,
      esbuildOptions(options) {
        options.conditions = ["@suaveplan/source"];
      },
    },
  ),
);
