import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig([
  createTsupConfig(
    { index: "src/index.ts", "runner/index": "src/runner/index.ts" },
    // The runner-main build below writes into the same dist/: leave its files alone.
    { splitting: false, clean: ["!runner-main.*"] },
  ),
  // `runner-main` must be ONE self-contained file: the child's permission model lets it read
  // exactly that file, so the shared guest runtime and the parts of sandbox-core it uses are
  // bundled in. The kernel's parts are stringified at run time (Function.prototype.toString),
  // so nothing may inject helpers into them: no `keepNames` (it adds `__name(...)` calls), no
  // minification, and a target that needs no down-levelling.
  createTsupConfig(
    { "runner-main": "src/runner/runner-main.ts" },
    {
      splitting: false,
      clean: false,
      noExternal: [/^@suaveplan\//],
      keepNames: false,
      minify: false,
      // sandbox-core's entries import their shared chunks bare; it declares `sideEffects: false`,
      // so dropping the chunks nothing uses is right and esbuild need not say so for each one.
      esbuildOptions(options) {
        options.logOverride = { ...options.logOverride, "ignored-bare-import": "silent" };
      },
    },
  ),
]);
