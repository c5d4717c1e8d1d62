import { createRequire } from "node:module";
import { isolatedVmMajorsFor } from "@suaveplan/sandbox/isolate-engine";

/**
 * Whether `isolated-vm` resolves where the isolate engine looks for it (from
 * `@suaveplan/sandbox-isolate`'s own location). Resolution only: nothing is
 * loaded, so this costs no native addon and no helper process.
 */
export function isolatedVmInstalled(): boolean {
  try {
    const umbrella = createRequire(import.meta.url).resolve("@suaveplan/sandbox/isolate-engine");
    const engine = createRequire(umbrella).resolve("@suaveplan/sandbox-isolate");
    createRequire(engine).resolve("isolated-vm/package.json");
    return true;
  } catch {
    return false;
  }
}

/** Why `run` without `--engine` cannot start without isolated-vm, and the ways on. */
export function missingIsolatedVmMessage(nodeMajor = Number.parseInt(process.versions.node, 10)): string {
  const major = isolatedVmMajorsFor(nodeMajor).at(-1);
  return [
    "run uses the isolate engine unless --engine says otherwise (a V8 isolate is the only JavaScript security boundary here), and its package isolated-vm is not installed.",
    `Install it with \`npm i -g isolated-vm@${major}\` (the CLI installed globally; \`npm i isolated-vm@${major}\` in a project; the newest major for Node ${nodeMajor}, a native addon), or choose another engine:`,
    "  --engine spawn   a child Node process under Node's permission model (a security boundary only when the OS also confines it)",
    "  --engine worker  a worker thread with its own heap and memory limit (NOT a security boundary)",
    "  --engine vm      a node:vm context in the CLI's own process (NOT a security boundary: for code you trust)",
  ].join("\n");
}
