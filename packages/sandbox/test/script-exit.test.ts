import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { type BuiltinEngineName, ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const dist = join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const url = (path: string) => JSON.stringify(pathToFileURL(join(dist, path)).href);
/** Each built-in engine with the class its subpath exports. */
const CLASS_NAMES: Record<BuiltinEngineName, string> = {
  vm: "VmEngine",
  worker: "WorkerEngine",
  spawn: "SpawnEngine",
  isolate: "IsolateEngine",
  quickjs: "QuickJsEngine",
};
const engines = ENGINE_NAMES.map((name) => [name, CLASS_NAMES[name]] as const);

async function runScript(lines: string[]): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    ["--no-node-snapshot", "--input-type=module", "-e", lines.join("\n")],
    {
      timeout: 30_000,
    },
  );
  return JSON.parse(stdout);
}

// A plain script whose last step is `await destroy()` must exit 0 — not 13
// ("unfinished top-level await") because an unref'd spare worker or child was
// awaited without keeping the event loop alive. The pause before destroy lets
// the engine start its pre-started spare, so destroy has one to wait for.
describe("a script that ends with await destroy()", () => {
  it.each(engines)("exits cleanly with the %s engine used directly", async (engine, className) => {
    const result = await runScript([
      `import { ${className} } from ${url(`${engine}-engine/index.js`)};`,
      `const engine = new ${className}({});`,
      "const { result } = await engine.execute('1 + 1');",
      "await new Promise((resolve) => setTimeout(resolve, 500));",
      "await engine.destroy();",
      "process.stdout.write(JSON.stringify(result));",
    ]);
    expect(result).toBe(2);
  });

  it.each(engines)("exits cleanly with the %s engine behind createSandbox", async (engine) => {
    const result = await runScript([
      `import { createSandbox } from ${url("index.js")};`,
      `const sandbox = createSandbox({ engine: ${JSON.stringify(engine)} });`,
      "const { result } = await sandbox.execute('1 + 1');",
      "await new Promise((resolve) => setTimeout(resolve, 500));",
      "await sandbox.destroy();",
      "process.stdout.write(JSON.stringify(result));",
    ]);
    expect(result).toBe(2);
  });
});
