#!/usr/bin/env node
// Which side of a sandbox each module sits on, checked from its imports (TypeScript's own
// `preProcessFile`, dynamic imports included; test files are not checked):
// - the kernel (packages/sandbox-kernel/src) runs inside the realm and imports nothing: every
//   specifier is relative;
// - the realm side of the runtime (sandbox-guest's realm.ts and the folders it exports) and
//   every module an engine's realm entry reaches (each package's package.json lists them as
//   "suaveplan": { "realmEntries": [...] }: the spawn child, the worker thread, the isolate
//   helper) prepares no code: no TypeScript stripping, no parser, nothing from
//   sandbox-guest's host side (`prepare/`, `host/`, its root entry — only
//   `@suaveplan/sandbox-guest/realm`).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const root = resolve(new URL("..", import.meta.url).pathname);
const packages = join(root, "packages");

/** Packages and code-transformer exports that prepare code: a realm never imports them. */
const PREPARATION = new Set([
  "@suaveplan/sandbox-typescript",
  "acorn",
  "acorn-walk",
  "@suaveplan/sandbox-guest",
]);
/** The code-transformer exports a realm may use: a cache and its size bound, not a parser. */
const REALM_SAFE_TRANSFORMER_NAMES = new Set(["LruCache", "MAX_CACHED_CODE_LENGTH"]);
const GUEST_REALM_DIRS = ["driver", "vm-realm", "outcome", "protocol", "kernel", "request"].map((dir) =>
  join(packages, "sandbox-guest/src", dir),
);
/**
 * Where each engine's realm side starts: every package lists its own in its package.json as
 * `"suaveplan": { "realmEntries": ["src/…"] }`, so a new engine declares them without editing
 * this script.
 */
const REALM_ENTRIES = readdirSync(packages).flatMap((dir) => {
  const manifest = join(packages, dir, "package.json");
  if (!existsSync(manifest)) return [];
  const entries = JSON.parse(readFileSync(manifest, "utf8")).suaveplan?.realmEntries ?? [];
  return entries.map((entry) => join(packages, dir, entry));
});

const problems = [];
const say = (file, message) => problems.push(`${relative(root, file)}: ${message}`);

function importsOf(file) {
  const text = readFileSync(file, "utf8");
  return ts.preProcessFile(text, true, true).importedFiles.map((entry) => ({
    specifier: entry.fileName,
    // The named imports of the statement, for the code-transformer rule.
    names: namesImported(text, entry.pos),
  }));
}

function namesImported(text, position) {
  const start = text.lastIndexOf("import", position);
  const braces = /\{([^}]*)\}\s*from\s*$/.exec(text.slice(start, position - 1));
  if (braces === null) return undefined;
  return braces[1]
    .split(",")
    .map((name) => name.replace(/^\s*type\s+/, "").trim())
    .filter(Boolean);
}

function resolveRelative(from, specifier) {
  const base = resolve(dirname(from), specifier).replace(/\.js$/, "");
  for (const candidate of [`${base}.ts`, join(base, "index.ts")]) if (existsSync(candidate)) return candidate;
  return undefined;
}

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) yield path;
  }
}

// The kernel imports nothing.
for (const file of sources(join(packages, "sandbox-kernel/src"))) {
  for (const { specifier } of importsOf(file)) {
    if (!specifier.startsWith("."))
      say(file, `imports "${specifier}": the kernel runs inside the realm and imports nothing`);
  }
}

// The realm side prepares no code: walk every module a realm entry reaches.
const seen = new Set();
const pending = REALM_ENTRIES.filter((file) => existsSync(file));
for (const file of REALM_ENTRIES) {
  if (!existsSync(file)) say(file, "is listed in realmEntries but does not exist");
}
for (const file of sources(join(packages, "sandbox-guest/src"))) {
  if (GUEST_REALM_DIRS.some((dir) => file.startsWith(`${dir}/`))) pending.push(file);
}
while (pending.length > 0) {
  const file = pending.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  for (const { specifier, names } of importsOf(file)) {
    if (specifier.startsWith(".")) {
      const target = resolveRelative(file, specifier);
      if (target === undefined) continue;
      const inGuest = relative(join(packages, "sandbox-guest/src"), target);
      if (!inGuest.startsWith("..") && /^(prepare|host)\/|^index\.ts$/.test(inGuest)) {
        say(file, `imports "${specifier}", sandbox-guest's host side: a realm prepares no code`);
      } else {
        pending.push(target);
      }
    } else if (PREPARATION.has(specifier)) {
      const fix =
        specifier === "@suaveplan/sandbox-guest" ? ' (import "@suaveplan/sandbox-guest/realm")' : "";
      say(file, `imports "${specifier}": a realm prepares no code${fix}`);
    } else if (specifier === "@suaveplan/sandbox-core/code-transformer") {
      const unsafe = (names ?? ["*"]).filter((name) => !REALM_SAFE_TRANSFORMER_NAMES.has(name));
      if (unsafe.length > 0)
        say(file, `imports ${unsafe.join(", ")} from "${specifier}": a realm prepares no code`);
    }
  }
}

if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
  process.exit(1);
}
console.log(`check-layers: the kernel imports nothing; ${seen.size} realm-side modules prepare no code`);
