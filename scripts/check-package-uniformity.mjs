#!/usr/bin/env node
// Fails when a package drifts from the template: README, description, engines,
// license (MIT, with the root LICENSE copied into the package and shipped),
// repository/homepage/bugs/keywords pointing at the one GitHub repository,
// ESM-only exports with types before default, the source condition first,
// files ["dist", ..., "LICENSE"], sideEffects false, and the shared tool configs.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
/** The one public home of every package; package.json links must agree with it. */
const REPOSITORY = "https://github.com/suaveplan/sandbox";
/** Besides "dist" and "LICENSE", what a package may ship: error pages, other docs, C sources. */
const EXTRA_FILES = new Set(["docs", "native"]);
const license = readFileSync(join(root, "LICENSE"), "utf8");
const problems = [];
if (!/^MIT License\n\nCopyright \(c\) \d{4} Suaveplan Sandbox contributors\n/.test(license))
  problems.push(
    "LICENSE: the root LICENSE must be the MIT text with the Suaveplan Sandbox contributors copyright",
  );
for (const dir of readdirSync(join(root, "packages"))) {
  const base = join(root, "packages", dir);
  const file = join(base, "package.json");
  if (!existsSync(file)) continue;
  const pkg = JSON.parse(readFileSync(file, "utf8"));
  const say = (msg) => problems.push(`${pkg.name ?? dir}: ${msg}`);
  // Private workspace packages (repository tests such as docs-tests) are never published.
  if (pkg.private === true) {
    if (!existsSync(join(base, "README.md"))) say("missing README.md");
    continue;
  }
  if (!pkg.name?.startsWith("@suaveplan/")) say("name must be scoped @suaveplan/");
  if (!pkg.description) say("missing description");
  if (pkg.license !== "MIT") say("license must be MIT");
  if (pkg.engines?.node !== ">=20.19") say('engines.node must be ">=20.19"');
  if (pkg.type !== "module") say('type must be "module"');
  if (pkg.sideEffects !== false) say("sideEffects must be false");
  const files = Array.isArray(pkg.files) ? pkg.files : [];
  if (
    files[0] !== "dist" ||
    files.at(-1) !== "LICENSE" ||
    files.slice(1, -1).some((f) => !EXTRA_FILES.has(f))
  )
    say(`files must be ["dist", ${[...EXTRA_FILES].map((f) => `"${f}"?`).join(", ")}, "LICENSE"]`);
  for (const extra of files.slice(1, -1))
    if (!existsSync(join(base, extra))) say(`files lists "${extra}" but the package has no ${extra}/`);
  if (!existsSync(join(base, "README.md"))) say("missing README.md");
  if (!existsSync(join(base, "LICENSE"))) say("missing LICENSE (copy the root LICENSE)");
  else if (readFileSync(join(base, "LICENSE"), "utf8") !== license)
    say("LICENSE differs from the root LICENSE");
  const repo = pkg.repository;
  if (repo?.type !== "git" || repo.url !== `git+${REPOSITORY}.git` || repo.directory !== `packages/${dir}`)
    say(`repository must be { type: "git", url: "git+${REPOSITORY}.git", directory: "packages/${dir}" }`);
  if (pkg.homepage !== `${REPOSITORY}/tree/main/packages/${dir}#readme`)
    say(`homepage must be "${REPOSITORY}/tree/main/packages/${dir}#readme"`);
  if (pkg.bugs?.url !== `${REPOSITORY}/issues`) say(`bugs.url must be "${REPOSITORY}/issues"`);
  const keywords = Array.isArray(pkg.keywords) ? pkg.keywords : [];
  if (
    keywords.length < 3 ||
    !keywords.includes("sandbox") ||
    keywords.some((k) => typeof k !== "string" || k !== k.toLowerCase())
  )
    say('keywords must be at least three lower-case strings including "sandbox"');
  for (const cfg of ["tsconfig.json", "tsup.config.ts", "vitest.config.ts"]) {
    if (!existsSync(join(base, cfg))) say(`missing ${cfg}`);
  }
  const exportsMap = pkg.exports ?? {};
  if (exportsMap["./package.json"] !== "./package.json") say('exports must include "./package.json"');
  for (const [key, entry] of Object.entries(exportsMap)) {
    if (key === "./package.json") continue;
    const keys = Object.keys(entry);
    if (keys[0] !== "@suaveplan/source") say(`exports["${key}"]: "@suaveplan/source" must come first`);
    if (keys.indexOf("types") === -1 || keys.indexOf("types") > keys.indexOf("default")) {
      say(`exports["${key}"]: "types" must come before "default"`);
    }
    if ("require" in entry) say(`exports["${key}"]: ESM-only, no "require" condition`);
    const published = pkg.publishConfig?.exports?.[key];
    if (!published || published.types !== entry.types || published.default !== entry.default) {
      say(`publishConfig.exports["${key}"] must mirror exports["${key}"] without the source condition`);
    }
  }
  for (const [name, range] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
    if (name.startsWith("@suaveplan/") && range !== "workspace:^") say(`${name} must be "workspace:^"`);
  }
}
if (problems.length > 0) {
  console.error(`Package uniformity check failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
console.log("Package uniformity: every package matches the template.");
