import { spawn } from "node:child_process";
import { constants } from "node:os";

const FLAG = "--no-node-snapshot";

/**
 * Subcommands that load isolated-vm in this process, which needs Node's
 * start-up snapshot off on Node 20+: only `bench`, which measures raw
 * in-process isolated-vm. `run` and `mcp` leave isolates to the isolate
 * engine's helper process, so they run in the first process, and a Ctrl-C or
 * a closed pipe reaches the process that owns the runs.
 */
export const SUBCOMMANDS_NEEDING_NO_SNAPSHOT: ReadonlySet<string> = new Set(["bench"]);

/**
 * isolated-vm needs Node's startup snapshot off on Node 20+. True when this
 * process already runs that way (flag on the command line or in NODE_OPTIONS).
 */
export function runsWithoutNodeSnapshot(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS,
): boolean {
  return execArgv.includes(FLAG) || (nodeOptions ?? "").split(/\s+/).includes(FLAG);
}

/**
 * Re-run this script under `node --no-node-snapshot` with the same arguments
 * and stdio, forwarding SIGINT/SIGTERM (the child reports them); resolves the
 * child's exit code, or 128 + the number of the signal that ended it.
 */
export function reexecWithoutNodeSnapshot(script: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, FLAG, script, ...args], { stdio: "inherit" });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward).on("SIGTERM", forward);
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      process.off("SIGINT", forward).off("SIGTERM", forward);
      resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 15) : 1));
    });
  });
}
