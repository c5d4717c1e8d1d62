import { createSandbox } from "@suaveplan/sandbox";
import { isolatedVmMajorsFor } from "@suaveplan/sandbox/isolate-engine";
import { ENGINE_NAMES, type EngineName } from "@suaveplan/sandbox-core/types";
import { UsageError } from "../cli/usage-error.js";
import { isolatedVmInstalled } from "../run-command/isolated-vm-installed.js";

/** How long an engine's start-up check may take (an isolate helper process starting on a loaded host included), in ms. */
const CHECK_TIMEOUT_MS = 30_000;

/**
 * `--engine` of `worker`, repeated or as comma lists, into engine names in
 * order without repeats; `isolate` when none is given.
 * @throws UsageError naming an unknown engine and the known ones.
 */
export function parseWorkerEngines(values: readonly string[]): EngineName[] {
  const names = values.flatMap((value) => value.split(",")).map((name) => name.trim());
  if (names.length === 0) return ["isolate"];
  for (const name of names) {
    if (!(ENGINE_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(
        `--engine: unknown engine ${JSON.stringify(name)}; a worker runs ${ENGINE_NAMES.join(", ")} (repeat --engine or give a comma list)`,
      );
    }
  }
  return [...new Set(names)] as EngineName[];
}

/**
 * Run `1 + 1` once on each engine, so an engine this host cannot run (isolate
 * without isolated-vm, or with a build for another Node; a missing helper
 * entry) refuses the worker at start, not each job a caller sends it later.
 * @throws UsageError naming each engine that failed and why.
 */
export async function checkEngines(engines: readonly EngineName[]): Promise<void> {
  const problems = await Promise.all(engines.map(engineProblem));
  const found = problems.filter((problem) => problem !== undefined);
  if (found.length > 0) {
    throw new UsageError(
      `${found.join("\n")}\nStart the worker with engines this host can run (--engine ${ENGINE_NAMES.join("|")}), or fix the host.`,
    );
  }
}

async function engineProblem(engine: EngineName): Promise<string | undefined> {
  // Asked first, as `run` asks: the isolate helper would find out only in its own process.
  if (engine === "isolate" && !isolatedVmInstalled()) {
    const nodeMajor = Number.parseInt(process.versions.node, 10);
    const major = isolatedVmMajorsFor(nodeMajor).at(-1);
    return `--engine isolate: the package isolated-vm is not installed; install it with \`npm i -g isolated-vm@${major}\` (the CLI installed globally; \`npm i isolated-vm@${major}\` in a project; the newest major for Node ${nodeMajor}, a native addon)`;
  }
  try {
    await using sandbox = createSandbox({ engine, timeout: CHECK_TIMEOUT_MS });
    const result = await sandbox.execute("1 + 1");
    if (result.success && result.result === 2) return undefined;
    return `--engine ${engine}: this host cannot run it: ${result.error ?? "1 + 1 did not give 2"}`;
  } catch (error) {
    return `--engine ${engine}: this host cannot run it: ${error instanceof Error ? error.message : String(error)}`;
  }
}
