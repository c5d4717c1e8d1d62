#!/usr/bin/env node
// Quick start: install and build quietly (one progress line per phase, full
// output in quickstart.log), then run the CLI on the example snippet under
// every engine — the demo is the only long output. On Node 22 and 24, setup
// installs that line's isolated-vm and leaves the committed files as they were
// (ISOLATED_VM_BY_NODE_LINE in setup.mjs).
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createReporter, setup } from "./setup.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const log = join(root, "quickstart.log");
console.log("quickstart: full install and build output goes to quickstart.log");
const reporter = createReporter(log);
const { env } = setup(reporter);
console.log("run: suaveplan-sandbox run examples/agent-snippet.js --engine all\n");
reporter.note("$ node packages/sandbox-cli/dist/bin.js run examples/agent-snippet.js --engine all");
const demo = spawnSync(
  process.execPath,
  [
    join(root, "packages", "sandbox-cli", "dist", "bin.js"),
    "run",
    "examples/agent-snippet.js",
    "--engine",
    "all",
  ],
  { cwd: root, env, stdio: "inherit" },
);
process.exit(demo.status ?? 1);
