// This package's `bench` script: `node --no-node-snapshot dist/bin.js [--iterations N] [--json]`.
// The same run as `suaveplan-sandbox bench`, which bundles this package.
import { parseArgs } from "node:util";
import { runBench } from "./run-bench.js";

const USAGE = "usage: node --no-node-snapshot dist/bin.js [--iterations N] [--json]\n";

function usage(problem: string): never {
  process.stderr.write(`sandbox-bench: ${problem}\n${USAGE}`);
  process.exit(2);
}

let values: { iterations?: string | undefined; json?: boolean | undefined; help?: boolean | undefined };
try {
  ({ values } = parseArgs({
    options: {
      iterations: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (error) {
  usage((error as Error).message);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
// isolated-vm, measured in this process, needs Node's start-up snapshot off on Node 20+.
const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
if (!flags.includes("--no-node-snapshot")) usage("run under node --no-node-snapshot (isolated-vm needs it)");
const iterations = values.iterations === undefined ? undefined : Number(values.iterations);
if (iterations !== undefined && !(Number.isInteger(iterations) && iterations > 0))
  usage("--iterations must be a positive whole number");

const { complete } = await runBench(
  { ...(iterations === undefined ? {} : { iterations }), json: values.json === true },
  { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) },
);
process.exitCode = complete ? 0 : 1;
// Everything is destroyed by now; this only guards against a leaked handle keeping the bench alive.
setTimeout(() => process.exit(process.exitCode), 2_000).unref();
