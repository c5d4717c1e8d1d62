#!/usr/bin/env node
// Lint the package in the current directory as users receive it: pack it with
// pnpm (publishConfig applied), then run publint and arethetypeswrong
// (esm-only profile) on the tarball.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dest = mkdtempSync(join(tmpdir(), "suaveplan-pack-"));
function run(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: ["ignore", args[0] === "pack" ? "ignore" : "inherit", "inherit"] });
  if (r.error) console.error(`lint-package: ${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    rmSync(dest, { recursive: true, force: true });
    process.exit(r.status ?? 1);
  }
}
try {
  run("pnpm", ["pack", "--pack-destination", dest]);
  const tarball = join(
    dest,
    readdirSync(dest).find((f) => f.endsWith(".tgz")),
  );
  run("publint", ["run", tarball, "--strict"]);
  run("attw", [tarball, "--profile", "esm-only"]);
} finally {
  rmSync(dest, { recursive: true, force: true });
}
