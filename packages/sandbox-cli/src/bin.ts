#!/usr/bin/env node
// The entry decides how to start before it imports the program, so the
// commands that never load isolated-vm (`exec`, `probe`, `--version`,
// `--help`) pay one plain Node start and nothing more:
// - `--version` prints and exits;
// - `bench` (which measures isolated-vm in this process, needing `--no-node-snapshot`
//   on Node 20+) re-executes at once under that flag, before any import (`run` and
//   `mcp` run isolates in the isolate engine's helper process and need no flag);
// - everything else imports the program and runs in this process.
import { fileURLToPath } from "node:url";
import {
  reexecWithoutNodeSnapshot,
  runsWithoutNodeSnapshot,
  SUBCOMMANDS_NEEDING_NO_SNAPSHOT,
} from "./cli/node-flags.js";
import { VERSION } from "./cli/version.js";

const args = process.argv.slice(2);
const subcommand = args[0];

if (args.length === 1 && (subcommand === "--version" || subcommand === "-V")) {
  process.stdout.write(`${VERSION}\n`);
} else if (
  subcommand !== undefined &&
  SUBCOMMANDS_NEEDING_NO_SNAPSHOT.has(subcommand) &&
  !runsWithoutNodeSnapshot()
) {
  process.exitCode = await reexecWithoutNodeSnapshot(fileURLToPath(import.meta.url), args);
} else {
  const { installStopHandling } = await import("./cli/process-stop.js");
  installStopHandling();
  const [{ runCli }, { processIo }] = await Promise.all([
    import("./cli/program.js"),
    import("./cli/cli-io.js"),
  ]);
  const code = await runCli(args, processIo());
  process.exitCode = code;
  // Everything is destroyed by now; this only guards against a leaked handle keeping the CLI alive.
  setTimeout(() => process.exit(code), 2_000).unref();
}
