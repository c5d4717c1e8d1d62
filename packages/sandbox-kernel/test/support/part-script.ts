import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

// tsup's own esbuild, as the package's build uses it (tsup.config.ts).
const { buildSync } = createRequire(createRequire(import.meta.url).resolve("tsup"))("esbuild") as {
  buildSync(options: Record<string, unknown>): { outputFiles: { text: string }[] };
};

/**
 * TEST ONLY. An expression that evaluates to the function `name` exported by the kernel module
 * `file`, bundled with what it imports: how a test installs one part (written as several files)
 * into a fresh `node:vm` context, as the kernel's build bundles a profile.
 */
export function partExpression(file: URL, name: string): string {
  const { outputFiles } = buildSync({
    entryPoints: [fileURLToPath(file)],
    bundle: true,
    write: false,
    format: "iife",
    globalName: "part",
    platform: "neutral",
    target: "node20",
    logLevel: "warning",
  });
  return `(() => {\n${outputFiles[0]?.text ?? ""}\nreturn part.${name};\n})()`;
}
