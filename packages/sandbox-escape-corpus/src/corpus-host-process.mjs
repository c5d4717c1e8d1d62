// A throw-away host process for techniques that may take their host down (memory bombs). It runs
// the built packages (dist), as an application would, one column after the other, and prints one
// JSON line per finished column; if this process dies, the host died in the first column missing.
// argv: <columns: facade,raw,tools | plugin> <engine | plugin> <program file> <limits JSON>
import { readFileSync } from "node:fs";
import { inspect } from "node:util";

const [columns, target, programFile, limitsJson] = process.argv.slice(2);
const program = readFileSync(programFile, "utf8");
const limits = JSON.parse(limitsJson);

/** The raw engine, made as `createSandbox` makes it, from the umbrella's registry. */
async function rawEngine(engine) {
  const { engineLoader } = await import("@suaveplan/sandbox");
  const factory = await engineLoader(engine === "spawn-confined" ? "spawn" : engine)();
  const options = engine === "spawn-confined" ? { confinement: await confinement() } : {};
  return factory.create({ limits, options });
}

let provider;
/** The OS confinement of the spawn-confined tier (as `corpusConfinement()` in corpus-runner.ts). */
async function confinement() {
  const { LocalSandboxProvider } = await import("@suaveplan/dsh-sandbox-local");
  provider ??= new LocalSandboxProvider({ network: "deny" });
  return provider;
}

async function runPlugin() {
  const { createVmSandbox } = await import("@suaveplan/api-sandbox-vm");
  const sandbox = await createVmSandbox({
    pluginModulePath: programFile,
    policy: {},
    timeoutMs: limits.timeout,
    memoryLimitMb: limits.memoryLimit / 1024 / 1024,
  });
  try {
    return { outcome: "ok", seen: inspect(await sandbox.call("run"), { depth: 4 }) };
  } catch (error) {
    return { outcome: String(error.code ?? "failed"), seen: String(error.message) };
  } finally {
    await sandbox.dispose();
  }
}

async function runEngine(column) {
  const tools = {
    echo: {
      description: "Returns its input",
      inputSchema: { type: "object" },
      execute: async (input) => input,
    },
  };
  // As in the in-process columns: facade = createSandbox with tools; tools = the raw engine with
  // the tools as hostCalls.
  const engine =
    column === "facade"
      ? (await import("@suaveplan/sandbox")).createSandbox({
          engine: target === "spawn-confined" ? "spawn" : target,
          ...(target === "spawn-confined" ? { engineOptions: { confinement: await confinement() } } : {}),
          ...limits,
          tools,
        })
      : await rawEngine(target);
  const { createToolRunner, normaliseTools } = await import("@suaveplan/sandbox-tools");
  const hostCalls = column === "tools" ? createToolRunner({ tools: normaliseTools(tools) }) : undefined;
  try {
    const result = await engine.execute(program, {}, hostCalls === undefined ? {} : { hostCalls });
    hostCalls?.close();
    return {
      outcome: result.success ? "ok" : (result.errorCode ?? "failed"),
      seen: inspect(result, { depth: 4 }),
    };
  } finally {
    await engine.destroy();
  }
}

for (const column of columns.split(",")) {
  const done = column === "plugin" ? await runPlugin() : await runEngine(column);
  process.stdout.write(`${JSON.stringify({ column, ...done })}\n`);
}
provider?.dispose();
