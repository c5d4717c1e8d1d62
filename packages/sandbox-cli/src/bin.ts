#!/usr/bin/env node
import { fileURLToPath } from "node:url";
import { processIo } from "./cli/cli-io.js";
import { reexecWithoutNodeSnapshot, runsWithoutNodeSnapshot } from "./cli/node-flags.js";
import { runCli } from "./cli/program.js";

const args = process.argv.slice(2);
// The isolate engine (isolated-vm) needs `--no-node-snapshot` on Node 20+; re-run ourselves with it.
const code = runsWithoutNodeSnapshot()
  ? await runCli(args, processIo())
  : await reexecWithoutNodeSnapshot(fileURLToPath(import.meta.url), args);
process.exitCode = code;
// Everything is destroyed by now; this only guards against a leaked handle keeping the CLI alive.
setTimeout(() => process.exit(code), 2_000).unref();
