#!/usr/bin/env node
// Installs each published package the way a stranger would: its packed
// tarball plus the tarballs of the @suaveplan packages it depends on, into an
// empty project outside the repository (everything else from the registry),
// then imports every subpath it exports and, for the CLI, runs its bin.
//
//   node scripts/packed-install.mjs            # every package (run after the build)
//   node scripts/packed-install.mjs sandbox-vm # only these folders under packages/
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { pnpmCommand } from "./setup.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pnpm = pnpmCommand();

/** Every non-private package: folder, manifest. */
function workspacePackages() {
  const folders = readdirSync(join(root, "packages"));
  return folders
    .map((folder) => ({
      folder,
      manifest: JSON.parse(readFileSync(join(root, "packages", folder, "package.json"), "utf8")),
    }))
    .filter(({ manifest }) => manifest.private !== true);
}

/** The @suaveplan packages `name` needs at run time, itself included. */
function closure(name, byName) {
  const seen = new Set();
  const visit = (current) => {
    if (seen.has(current)) return;
    seen.add(current);
    const {
      dependencies = {},
      peerDependencies = {},
      peerDependenciesMeta = {},
    } = byName.get(current).manifest;
    const required = [
      ...Object.keys(dependencies),
      ...Object.keys(peerDependencies).filter((peer) => peerDependenciesMeta[peer]?.optional !== true),
    ];
    for (const dep of required) if (byName.has(dep)) visit(dep);
  };
  visit(name);
  return [...seen];
}

/**
 * Optional peers not installed here: isolated-vm builds a native addon (the
 * engine suites test it on every Node line); the packages load it lazily.
 */
const SKIPPED_PEERS = new Set(["isolated-vm"]);

/**
 * The registry packages a consumer adds itself: the peers that are not ours,
 * optional ones too (e.g. vitest for a `./testing` subpath), but SKIPPED_PEERS.
 */
function peersOf(names, byName) {
  const peers = {};
  for (const name of names) {
    const { peerDependencies = {} } = byName.get(name).manifest;
    for (const [peer, range] of Object.entries(peerDependencies)) {
      if (!byName.has(peer) && !SKIPPED_PEERS.has(peer)) peers[peer] = range;
    }
  }
  return peers;
}

/** Entry scripts (`./runner-main`) run when imported; they are started, not imported. */
const isEntryScript = (subpath) => subpath.endsWith("-main");

/**
 * Runs beyond the imports, where loading alone would not show a packaging
 * fault: the worker and child entry files must be in the tarball.
 */
const SMOKES = {
  "@suaveplan/sandbox": [
    'const { createSandbox } = await import("@suaveplan/sandbox");',
    'for (const engine of ["vm", "worker", "spawn"]) {',
    "  const sandbox = createSandbox({ engine, timeout: 5000 });",
    '  const r = await sandbox.execute("2 + 3");',
    "  await sandbox.destroy();",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of the generated script
    "  if (r.result !== 5) throw new Error(`${engine}: ${JSON.stringify(r)}`);",
    "}",
    'console.log("vm, worker, spawn run 2 + 3 → 5");',
  ].join("\n"),
};

/** `import()` of each exported subpath (conditions other than types/default are repo-only). */
function importScript(name, manifest) {
  const subpaths = Object.keys(manifest.exports ?? { ".": "" }).filter(
    (subpath) => subpath !== "./package.json" && !isEntryScript(subpath),
  );
  const specifiers = subpaths.map((subpath) => (subpath === "." ? name : `${name}/${subpath.slice(2)}`));
  return [
    `const specifiers = ${JSON.stringify(specifiers)};`,
    "const counts = [];",
    "for (const specifier of specifiers) {",
    "  const namespace = await import(specifier);",
    "  const names = Object.keys(namespace);",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of the generated script
    "  if (names.length === 0) throw new Error(`${specifier} exports nothing`);",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of the generated script
    "  counts.push(`${specifier} (${names.length})`);",
    "}",
    "console.log(counts.join(', '));",
    SMOKES[name] ?? "",
  ].join("\n");
}

function main() {
  const only = new Set(process.argv.slice(2));
  const packages = workspacePackages();
  const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]));
  const work = mkdtempSync(join(tmpdir(), "suaveplan-packed-"));
  const failures = [];
  try {
    const tarballs = join(work, "tarballs");
    mkdirSync(tarballs);
    const tarballOf = new Map();
    for (const { folder, manifest } of packages) {
      const before = new Set(readdirSync(tarballs));
      execFileSync(pnpm[0], [...pnpm.slice(1), "pack", "--pack-destination", tarballs], {
        cwd: join(root, "packages", folder),
        stdio: "ignore",
      });
      const made = readdirSync(tarballs).find((file) => !before.has(file));
      if (made === undefined) throw new Error(`pnpm pack wrote no tarball for ${manifest.name}`);
      tarballOf.set(manifest.name, join(tarballs, made));
    }
    for (const { folder, manifest } of packages) {
      if (only.size > 0 && !only.has(folder)) continue;
      const started = performance.now();
      const project = join(work, folder);
      mkdirSync(project);
      const ours = closure(manifest.name, byName);
      const files = Object.fromEntries(ours.map((name) => [name, `file:${tarballOf.get(name)}`]));
      writeFileSync(
        join(project, "package.json"),
        JSON.stringify({
          name: `consumer-of-${folder}`,
          private: true,
          type: "module",
          dependencies: { [manifest.name]: files[manifest.name], ...peersOf(ours, byName) },
          // Our other packages resolve to their tarballs too, not to the registry.
          overrides: files,
        }),
      );
      writeFileSync(join(project, "check.mjs"), importScript(manifest.name, manifest));
      try {
        execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], {
          cwd: project,
          stdio: ["ignore", "ignore", "pipe"],
        });
        let output = execFileSync(process.execPath, ["check.mjs"], { cwd: project, encoding: "utf8" }).trim();
        for (const bin of Object.keys(manifest.bin ?? {})) {
          const ran = execFileSync(
            "npx",
            ["--no-install", bin, "run", "-e", "2 + 3", "--engine", "vm", "--json"],
            {
              cwd: project,
              encoding: "utf8",
            },
          );
          const { result } = JSON.parse(ran);
          if (result !== 5) throw new Error(`${bin} run -e "2 + 3" printed ${ran}`);
          output += `; ${bin} run → ${result}`;
        }
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        console.log(
          `packed-install: ${manifest.name} with ${ours.length - 1} of ours: ${output} (${seconds} s)`,
        );
      } catch (error) {
        const detail = error.stderr
          ? String(error.stderr).trim().split("\n").slice(-5).join("\n")
          : error.message;
        failures.push(manifest.name);
        console.error(`packed-install: ${manifest.name} FAILED\n${detail}`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (failures.length > 0) {
    console.error(`packed-install: ${failures.length} failed: ${failures.join(", ")}`);
    process.exit(1);
  }
}

main();
