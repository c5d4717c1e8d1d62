import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig([
  // The cleaning pass of this build keeps the worker entry built next to it.
  createTsupConfig({ index: "src/index.ts" }, { clean: ["!worker-entry.cjs", "!worker-entry.cjs.map"] }),
  // The worker entry is a self-contained script: its text is what the engine
  // passes to `new Worker(source, { eval: true })` (no ESM loader, no module
  // resolution inside the worker), so the shared guest runtime and core are
  // bundled in, from source. An IIFE, so no top-level binding lands on the
  // worker's global object (`var crypto = …` would hit node's read-only
  // `crypto` global). esbuild alone (no rollup pass) and no `keepNames` or
  // minification: the kernel parts are stringified at run time and evaluated
  // in the guest realm, where a bundler helper such as `__name` is unbound.
  createTsupConfig(
    { "worker-entry": "src/worker-entry.ts" },
    {
      format: ["iife"],
      outExtension: () => ({ js: ".cjs" }),
      dts: false,
      clean: false,
      splitting: false,
      treeshake: false,
      keepNames: false,
      minify: false,
      noExternal: [/^@suaveplan\//],
      esbuildOptions(options) {
        options.conditions = ["@suaveplan/source"];
      },
    },
  ),
]);
