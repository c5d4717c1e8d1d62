import { defineConfig, type Options } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

/**
 * `@suaveplan/sandbox-kernel/sources` as an empty table: a worker takes the kernel's text from
 * its host (`workerData.kernelSource`). Bundled, the text (about 210 KB) is a string constant of
 * the entry and so part of the entry's code cache, which every `new Worker` clones on the
 * caller's thread (the cache grew from 60 KB to 468 KB).
 */
const kernelFromHost: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "kernel-from-host",
  setup(build) {
    build.onResolve({ filter: /^@suaveplan\/sandbox-kernel\/sources$/ }, () => ({
      path: "kernel-sources",
      namespace: "kernel-from-host",
    }));
    build.onLoad({ filter: /.*/, namespace: "kernel-from-host" }, () => ({
      contents: "export const KERNEL_SOURCES = Object.freeze({});",
      loader: "js",
    }));
  },
};

export default defineConfig([
  // The cleaning pass of this build keeps the worker entry built next to it.
  createTsupConfig({ index: "src/index.ts" }, { clean: ["!worker-entry.cjs", "!worker-entry.cjs.map"] }),
  // The worker entry is a self-contained script: its text is what the engine
  // passes to `new Worker(source, { eval: true })` (no ESM loader, no module
  // resolution inside the worker), so the shared guest runtime and core are
  // bundled in, from source. An IIFE, so no top-level binding lands on the
  // worker's global object (`var crypto = …` would hit node's read-only
  // `crypto` global). esbuild alone (no rollup pass) and no `keepNames` or
  // minification: the Wasm memory cap is stringified at run time and evaluated
  // in the guest realm, where a bundler helper such as `__name` is unbound.
  // The kernel's bundles are left out (see `kernelFromHost`).
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
      esbuildPlugins: [kernelFromHost],
      esbuildOptions(options) {
        options.conditions = ["@suaveplan/source"];
      },
    },
  ),
]);
