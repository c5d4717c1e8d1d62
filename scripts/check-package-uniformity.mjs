#!/usr/bin/env node
// Fails when a package drifts from the template: README, description, engines,
// license, ESM-only exports with types before default, the source condition
// first, files ["dist"], sideEffects false, and the shared tool configs.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const problems = [];
for (const dir of readdirSync(join(root, "packages"))) {
  const base = join(root, "packages", dir);
  const file = join(base, "package.json");
  if (!existsSync(file)) continue;
  const pkg = JSON.parse(readFileSync(file, "utf8"));
  const say = (msg) => problems.push(`${pkg.name ?? dir}: ${msg}`);
  if (!pkg.name?.startsWith("@suaveplan/")) say("name must be scoped @suaveplan/");
  if (!pkg.description) say("missing description");
  if (pkg.license !== "MIT") say("license must be MIT");
  if (pkg.engines?.node !== ">=20.19") say('engines.node must be ">=20.19"');
  if (pkg.type !== "module") say('type must be "module"');
  if (pkg.sideEffects !== false) say("sideEffects must be false");
  if (JSON.stringify(pkg.files) !== JSON.stringify(["dist"])) say('files must be ["dist"]');
  if (!existsSync(join(base, "README.md"))) say("missing README.md");
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
