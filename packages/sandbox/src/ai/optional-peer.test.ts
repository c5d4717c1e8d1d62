import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/g;

/** Every module specifier reachable from `entry` through this package's own relative imports. */
function reachableSpecifiers(entry: string): Set<string> {
  const seen = new Set<string>();
  const specifiers = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(IMPORT)) {
      if (specifier === undefined) continue;
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier.replace(/\.js$/, ".ts")));
      else specifiers.add(specifier);
    }
  };
  visit(entry);
  return specifiers;
}

it("the main entry never imports ai (an optional peer); only the ./ai subpath does", () => {
  const main = reachableSpecifiers(resolve(SRC, "index.ts"));
  expect([...main].filter((specifier) => specifier === "ai" || specifier.startsWith("ai/"))).toEqual([]);
  // The walk does reach the facade's own imports (so an empty list above means something).
  expect(main.has("@suaveplan/sandbox-tools") && main.has("@suaveplan/sandbox-typescript")).toBe(true);
  expect(reachableSpecifiers(resolve(SRC, "ai/index.ts")).has("ai")).toBe(true);
});
