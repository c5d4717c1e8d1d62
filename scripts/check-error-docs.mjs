#!/usr/bin/env node
// Error pages ship with the package that owns the codes. For every
// defineCodes(prefix, [...names], { docs: "<package>" }) in a package's sources:
// - `docs` is that package's own name (so messages point at the package that
//   declares the code: "(CODE; see <package>/docs/errors/CODE.md)");
// - packages/<dir>/docs/errors/<CODE>.md exists, starts with "# <CODE>", and the
//   package lists "docs" in its `files` so the pages are in its tarball;
// - no page is orphaned (every docs/errors/*.md of a package is a code it declares);
// - docs/errors/README.md at the root indexes every code with a link to its page.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
// defineCodes("PREFIX", [ "A", "B" ], { docs: "@scope/name" }) — the options object is optional here
// so that a missing `docs` is reported rather than skipped.
const declaration =
  /defineCodes\(\s*"([A-Z][A-Z0-9_]*)"\s*,\s*\[([^\]]*)\]\s*(?:,\s*\{\s*docs:\s*"([^"]*)"\s*,?\s*\})?\s*,?\s*\)/g;

/** Source text with block and line comments blanked (TSDoc examples are not declarations). */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) yield path;
  }
}

const problems = [];
const allCodes = new Map(); // code -> package dir
for (const dir of readdirSync(join(root, "packages"))) {
  const base = join(root, "packages", dir);
  const src = join(base, "src");
  if (!existsSync(src)) continue;
  const pkg = JSON.parse(readFileSync(join(base, "package.json"), "utf8"));
  const declared = new Set();
  for (const file of sources(src)) {
    for (const [, prefix, list, docs] of withoutComments(readFileSync(file, "utf8")).matchAll(declaration)) {
      const where = file.slice(root.length);
      if (docs !== pkg.name)
        problems.push(
          `${where}: defineCodes("${prefix}", …) must pass { docs: "${pkg.name}" } (got ${docs ?? "none"})`,
        );
      for (const [, name] of list.matchAll(/"([A-Z][A-Z0-9_]*)"/g)) {
        const code = `${prefix}_${name}`;
        if (allCodes.has(code)) problems.push(`${code} is declared by both ${allCodes.get(code)} and ${dir}`);
        allCodes.set(code, dir);
        declared.add(code);
        const page = join(base, "docs", "errors", `${code}.md`);
        if (!existsSync(page))
          problems.push(`${code} (${where}) has no page at packages/${dir}/docs/errors/${code}.md`);
        else if (!readFileSync(page, "utf8").startsWith(`# ${code}\n`))
          problems.push(`packages/${dir}/docs/errors/${code}.md must start with "# ${code}"`);
      }
    }
  }
  const pagesDir = join(base, "docs", "errors");
  if (declared.size > 0 && !pkg.files?.includes("docs"))
    problems.push(`${pkg.name}: declares error codes, so its package.json "files" must include "docs"`);
  if (existsSync(pagesDir)) {
    for (const page of readdirSync(pagesDir)) {
      if (!declared.has(page.replace(/\.md$/, "")))
        problems.push(`packages/${dir}/docs/errors/${page} is not a code ${pkg.name} declares`);
    }
  }
}

const indexFile = join(root, "docs", "errors", "README.md");
const index = existsSync(indexFile) ? readFileSync(indexFile, "utf8") : "";
if (index === "") problems.push("docs/errors/README.md (the index of every code) is missing");
for (const page of existsSync(join(root, "docs", "errors"))
  ? readdirSync(join(root, "docs", "errors"))
  : []) {
  if (page !== "README.md")
    problems.push(`docs/errors/${page}: pages live in the owning package's docs/errors/`);
}
for (const [code, dir] of allCodes) {
  const link = `[\`${code}\`](../../packages/${dir}/docs/errors/${code}.md)`;
  if (index !== "" && !index.includes(link)) problems.push(`docs/errors/README.md must list ${link}`);
}

if (problems.length > 0) {
  console.error(`Error docs check failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
console.log(`Error docs: all ${allCodes.size} declared codes have a page in the package that declares them.`);
