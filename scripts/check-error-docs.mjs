#!/usr/bin/env node
// Every error code declared with defineCodes(prefix, [...names]) in a package's
// sources must have its page at docs/errors/<CODE>.md.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const declaration = /defineCodes\(\s*"([A-Z][A-Z0-9_]*)"\s*,\s*\[([^\]]*)\]/g;

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) yield path;
  }
}

const missing = [];
let count = 0;
for (const pkg of readdirSync(join(root, "packages"))) {
  const src = join(root, "packages", pkg, "src");
  if (!existsSync(src)) continue;
  for (const file of sources(src)) {
    for (const [, prefix, list] of readFileSync(file, "utf8").matchAll(declaration)) {
      for (const [, name] of list.matchAll(/"([A-Z][A-Z0-9_]*)"/g)) {
        count++;
        const code = `${prefix}_${name}`;
        if (!existsSync(join(root, "docs", "errors", `${code}.md`)))
          missing.push(`${code} (${file.slice(root.length)})`);
      }
    }
  }
}
if (missing.length > 0) {
  console.error(`Error codes without a page under docs/errors/:\n- ${missing.join("\n- ")}`);
  process.exit(1);
}
console.log(`Error docs: all ${count} declared codes have a page.`);
