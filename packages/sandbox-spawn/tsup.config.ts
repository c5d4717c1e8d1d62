import { defineConfig, type Options } from "tsup";

type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

import { createTsupConfig } from "../../tooling/tsup.preset.ts";

/**
 * Nothing the child runs parses code (the host prepares it), yet acorn's module body builds its
 * Unicode tables on load: ~2 % of a child's start-up, and 5,700 lines V8 must pre-parse. Declared
 * free of side effects, acorn is dropped whole when none of its exports is used, as every package
 * of ours (`sideEffects: false`) already is.
 */
const acornWithoutSideEffects: Plugin = {
  name: "acorn-without-side-effects",
  setup(build) {
    build.onResolve({ filter: /^acorn(-walk)?$/ }, async (args) => {
      if (args.pluginData === "resolved") return undefined;
      const found = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: "resolved",
      });
      return found.errors.length > 0 ? undefined : { ...found, sideEffects: false };
    });
  },
};

export default defineConfig([
  createTsupConfig(
    { index: "src/index.ts", "runner/index": "src/runner/index.ts" },
    // The runner-main build below writes into the same dist/: leave its files alone.
    { splitting: false, clean: ["!runner-main.*"] },
  ),
  // `runner-main` must be ONE self-contained file: the child's permission model lets it read
  // exactly that file, so the realm side of the guest runtime (`@suaveplan/sandbox-guest/realm`,
  // with the kernel's script as text) and the parts of sandbox-core it uses are bundled in.
  // The Wasm memory cap (`capWasmMemory`) is still stringified at run time
  // (Function.prototype.toString), so nothing may inject helpers into it: no `keepNames` (it
  // adds `__name(...)` calls), no minification, and a target that needs no down-levelling.
  createTsupConfig(
    { "runner-main": "src/runner/runner-main.ts" },
    {
      splitting: false,
      clean: false,
      noExternal: [/^@suaveplan\//],
      keepNames: false,
      minify: false,
      esbuildPlugins: [acornWithoutSideEffects],
      // sandbox-core's entries import their shared chunks bare; it declares `sideEffects: false`,
      // so dropping the chunks nothing uses is right and esbuild need not say so for each one.
      esbuildOptions(options) {
        options.logOverride = { ...options.logOverride, "ignored-bare-import": "silent" };
      },
    },
  ),
]);
