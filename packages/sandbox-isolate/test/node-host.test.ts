import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { isolatedVmInstallHint } from "../src/isolate-factory/isolated-vm-versions.js";

const nodeMajor = Number.parseInt(process.versions.node, 10);

// These run the built package in a plain `node` child, because the facts under
// test are process-wide: the Node flags and module resolution (pnpm sets
// NODE_PATH for scripts, which would find isolated-vm anywhere).
const DIST = new URL("../dist/index.js", import.meta.url);
const run = promisify(execFile);
const emptyProject = mkdtempSync(join(tmpdir(), "suaveplan-no-ivm-"));

afterAll(() => rmSync(emptyProject, { recursive: true, force: true }));

interface ChildOptions {
  execArgv?: string[];
  nodeOptions?: string;
  engineOptions?: string;
}

async function executeInChild({
  execArgv = [],
  nodeOptions,
  engineOptions = "{}",
}: ChildOptions): Promise<unknown> {
  if (!existsSync(DIST)) throw new Error("dist/index.js is missing: run `pnpm build` first");
  const script = `
    const { IsolateEngine, createIsolatedVmFactory } = await import(${JSON.stringify(DIST.href)});
    const engine = new IsolateEngine(${engineOptions});
    const result = await engine.execute("2 + 3");
    await engine.destroy();
    process.stdout.write(JSON.stringify({ success: result.success, result: result.result, errorCode: result.errorCode, error: result.error }));
  `;
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_PATH;
  delete env.NODE_OPTIONS;
  if (nodeOptions !== undefined) env.NODE_OPTIONS = nodeOptions;
  const { stdout } = await run(process.execPath, [...execArgv, "--input-type=module", "-e", script], {
    env,
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    timeout: 30_000,
  });
  return JSON.parse(stdout);
}

describe("IsolateEngine in a plain Node process", () => {
  it("runs with `node --no-node-snapshot`", async () => {
    expect(await executeInChild({ execArgv: ["--no-node-snapshot"] })).toEqual({ success: true, result: 5 });
  });

  it("runs with NODE_OPTIONS=--no-node-snapshot", async () => {
    expect(await executeInChild({ nodeOptions: "--no-node-snapshot" })).toEqual({ success: true, result: 5 });
  });

  it("refuses to create isolates without --no-node-snapshot, saying how to fix it", async () => {
    expect(await executeInChild({})).toEqual({
      success: false,
      errorCode: "SANDBOX_ENGINE_UNAVAILABLE",
      error: expect.stringMatching(
        /^IsolateEngine refuses to start: Node \d+\.\d+\.\d+ runs with its startup snapshot, and isolated-vm requires `node --no-node-snapshot` on Node 20\+ .* \(SANDBOX_ENGINE_UNAVAILABLE\)$/,
      ),
    });
  });

  it('runs without the flag when nodeSnapshot: "ignore" accepts the risk (it works on this Node and platform)', async () => {
    expect(await executeInChild({ engineOptions: '{ nodeSnapshot: "ignore" }' })).toEqual({
      success: true,
      result: 5,
    });
  });

  it("says what to install when isolated-vm cannot be resolved", async () => {
    const engineOptions = `{ factory: createIsolatedVmFactory({ resolveFrom: ${JSON.stringify(join(emptyProject, "index.js"))} }) }`;
    expect(await executeInChild({ execArgv: ["--no-node-snapshot"], engineOptions })).toEqual({
      success: false,
      errorCode: "SANDBOX_ENGINE_UNAVAILABLE",
      error: `IsolateEngine cannot start: the package isolated-vm is not installed. ${isolatedVmInstallHint(nodeMajor)} (SANDBOX_ENGINE_UNAVAILABLE)`,
    });
  });
});
