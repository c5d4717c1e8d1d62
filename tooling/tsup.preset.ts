import type { Options } from "tsup";

/**
 * Shared tsup preset: ESM-only output with bundled `.d.ts`, one entry per
 * feature barrel. A package passes its entry map and nothing else.
 */
export function createTsupConfig(entry: Record<string, string>, overrides: Options = {}): Options {
  return {
    entry,
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    outDir: "dist",
    ...overrides,
  };
}
