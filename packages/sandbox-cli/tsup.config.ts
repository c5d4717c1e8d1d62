import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

/**
 * Bundled into the CLI from their sources:
 * - `dsh-bash-sandbox`, so tree-shaking keeps only what `exec` uses;
 * - `sandbox-bench`, the repository's private benchmarks, which are never
 *   published: `bench` runs them from this package's own dist (a chunk loaded
 *   only by `bench`). Their runtime dependencies are this package's own
 *   (`test/bench-bundle.test.ts` holds them to it), so they stay external.
 */
const BUNDLED = ["@suaveplan/dsh-bash-sandbox", "@suaveplan/sandbox-bench"];

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
      // so esbuild drops every module `exec` does not use (the sanitiser comes
      // from sandbox-core's small `./env` entry, which imports nothing).
      noExternal: BUNDLED,
      esbuildOptions(options) {
        options.conditions = ["@suaveplan/source"];
      },
    },
  ),
);
