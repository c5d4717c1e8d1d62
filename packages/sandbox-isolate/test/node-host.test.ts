import { execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { isolatedVmInstallHint } from "../src/isolate-factory/isolated-vm-versions.js";
import { gone } from "./support/process-gone.js";

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
    let engine;
    try {
      engine = new IsolateEngine(${engineOptions});
    } catch (error) {
      process.stdout.write(JSON.stringify({ thrown: error.code, message: error.message }));
      process.exit(0);
    }
    const result = await engine.execute("2 + 3");
    await engine.destroy();
    process.stdout.write(JSON.stringify({ processMode: engine.processMode, success: result.success, result: result.result, errorCode: result.errorCode, error: result.error }));
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
  it("runs its isolates in helper processes by default, even with `node --no-node-snapshot`", async () => {
    expect(await executeInChild({ execArgv: ["--no-node-snapshot"] })).toEqual({
      processMode: "helper",
      success: true,
      result: 5,
    });
  });

  it('process: "auto" keeps its meaning: in-process with `node --no-node-snapshot`', async () => {
    expect(
      await executeInChild({ execArgv: ["--no-node-snapshot"], engineOptions: '{ process: "auto" }' }),
    ).toEqual({ processMode: "in-process", success: true, result: 5 });
  });

  it('process: "auto" runs in-process with NODE_OPTIONS=--no-node-snapshot', async () => {
    expect(
      await executeInChild({ nodeOptions: "--no-node-snapshot", engineOptions: '{ process: "auto" }' }),
    ).toEqual({ processMode: "in-process", success: true, result: 5 });
  });

  it('process: "auto" runs in a helper process from a plain `node` without the flag', async () => {
    expect(await executeInChild({ engineOptions: '{ process: "auto" }' })).toEqual({
      processMode: "helper",
      success: true,
      result: 5,
    });
  });

  it('refuses process: "in-process" without --no-node-snapshot at construction, saying how to fix it', async () => {
    expect(await executeInChild({ engineOptions: '{ process: "in-process" }' })).toEqual({
      thrown: "SANDBOX_ENGINE_UNAVAILABLE",
      message: `IsolateEngine cannot run isolates in this process: Node ${process.versions.node} runs with its startup snapshot, and isolated-vm requires \`node --no-node-snapshot\` on Node 20+ (without it V8's shared heap can crash the whole process), but process: "in-process" was asked for. Start Node with --no-node-snapshot (test runners: pass it in the worker execArgv; NODE_OPTIONS also works), or let the engine use its helper processes (process: "helper", the default, with no factory), or pass { nodeSnapshot: "ignore" } to accept the risk (SANDBOX_ENGINE_UNAVAILABLE); see @suaveplan/sandbox-core/docs/errors/SANDBOX_ENGINE_UNAVAILABLE.md`,
    });
  });

  it('runs in-process without the flag when nodeSnapshot: "ignore" accepts the risk (it works on this Node and platform)', async () => {
    expect(
      await executeInChild({ engineOptions: '{ process: "in-process", nodeSnapshot: "ignore" }' }),
    ).toEqual({
      processMode: "in-process",
      success: true,
      result: 5,
    });
  });

  it("says what to install when isolated-vm cannot be resolved", async () => {
    const engineOptions = `{ factory: createIsolatedVmFactory({ resolveFrom: ${JSON.stringify(join(emptyProject, "index.js"))} }) }`;
    expect(await executeInChild({ execArgv: ["--no-node-snapshot"], engineOptions })).toEqual({
      processMode: "in-process",
      success: false,
      errorCode: "SANDBOX_ENGINE_UNAVAILABLE",
      error: `IsolateEngine cannot start: the package isolated-vm is not installed. ${isolatedVmInstallHint(nodeMajor)} (SANDBOX_ENGINE_UNAVAILABLE)`,
    });
  });
});

describe("IsolateEngine and process.exit()", () => {
  it("a host that calls process.exit(0) right after destroy() exits 0 (isolates still tearing down), every time", async () => {
    // Busy isolates, some disposed by their limits, then destroy() and an immediate exit: without
    // the teardown guard about one such exit in three ended in SIGSEGV (isolated-vm's teardown
    // thread beside the process's static destructors).
    const script = `
      const { IsolateEngine } = await import(${JSON.stringify(DIST.href)});
      const engine = new IsolateEngine({ process: "in-process", timeout: 2000, memoryLimit: 64 * 1024 * 1024 });
      const codes = ["1 + 1", "const a = []; for (;;) a.push(new Array(1e5).fill(1))", "while (true) {}", "await new Promise((r) => setTimeout(r, 5)); 2"];
      await Promise.all(Array.from({ length: 24 }, (_, i) => engine.execute(codes[i % 4], {}, { timeout: 300 })));
      await engine.destroy();
      process.exit(0);
    `;
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_PATH;
    delete env.NODE_OPTIONS;
    const exits: (number | string)[] = [];
    for (let host = 0; host < 8; host++) {
      const child = spawn(process.execPath, ["--no-node-snapshot", "--input-type=module", "-e", script], {
        env,
        stdio: "ignore",
      });
      const [code, signal] = (await new Promise((resolve) =>
        child.on("exit", (...ended) => resolve(ended)),
      )) as [number | null, NodeJS.Signals | null];
      exits.push(signal ?? (code as number));
    }
    expect(exits).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  }, 120_000);
});

/** A plain `node` (no --no-node-snapshot, no NODE_OPTIONS) running `body` as an ES module after importing the built package. */
function plainNodeArgs(body: string, dist: URL = DIST): { args: string[]; env: NodeJS.ProcessEnv } {
  if (!existsSync(DIST)) throw new Error("dist/index.js is missing: run `pnpm build` first");
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_PATH;
  delete env.NODE_OPTIONS;
  const script = `const { IsolateEngine } = await import(${JSON.stringify(dist.href)});\n${body}`;
  return { args: ["--input-type=module", "-e", script], env };
}

describe("IsolateEngine from a plain `node app.js` (helper process)", () => {
  it("runs code, tool calls, logs, timeouts and memory limits, and destroy() leaves no helper", async () => {
    const { args, env } = plainNodeArgs(`
      const engine = new IsolateEngine({ timeout: 5000 });
      const streamed = [];
      const sum = await engine.execute("2 + 3");
      const tool = await engine.execute(
        "console.log('asking', n); await tools.echo({ n, at: new Date(0) })",
        { n: 7 },
        { onLog: (entry) => streamed.push(entry), hostCalls: { names: ["echo"], call: async (_name, input) => input } },
      );
      const slow = await engine.execute("for (;;) {}", {}, { timeout: 100 });
      const bomb = await engine.execute("const a = []; for (;;) a.push(new Array(1e5).fill(1));", {}, { memoryLimit: 16 * 1024 * 1024 });
      const pid = engine.helperPid;
      await engine.destroy();
      let alive = true;
      try { process.kill(pid, 0); } catch { alive = false; }
      process.stdout.write(JSON.stringify({
        processMode: engine.processMode,
        sum: sum.result,
        tool: [tool.result.n, tool.result.at.toISOString(), tool.logs],
        streamed,
        slow: slow.errorCode,
        bomb: bomb.errorCode,
        helperIsChild: pid !== process.pid && typeof pid === "number",
        helperAliveAfterDestroy: alive,
      }));
    `);
    const { stdout } = await run(process.execPath, args, { env, timeout: 30_000 });
    const log = [{ level: "log", message: "asking 7" }];
    expect(JSON.parse(stdout)).toEqual({
      processMode: "helper",
      sum: 5,
      tool: [7, "1970-01-01T00:00:00.000Z", log],
      streamed: log,
      slow: "SANDBOX_TIMEOUT",
      bomb: "SANDBOX_MEMORY_EXCEEDED",
      helperIsChild: true,
      helperAliveAfterDestroy: false,
    });
  });

  it("an idle helper does not keep the application alive, and exits with it", async () => {
    const { args, env } = plainNodeArgs(`
      const engine = new IsolateEngine();
      const { result } = await engine.execute("2 + 3");
      process.stdout.write(JSON.stringify({ result, pid: engine.helperPid }));
      // no destroy(): the script simply ends
    `);
    const { stdout } = await run(process.execPath, args, { env, timeout: 30_000 });
    const { result, pid } = JSON.parse(stdout) as { result: number; pid: number };
    expect(result).toBe(5);
    expect(await gone(pid)).toBe(true);
  });

  it("says what to install when the helper cannot find isolated-vm", async () => {
    // The built package in a project without isolated-vm (its two workspace dependencies linked in).
    const project = mkdtempSync(join(tmpdir(), "suaveplan-helper-no-ivm-"));
    try {
      const scope = join(project, "node_modules", "@suaveplan");
      mkdirSync(join(scope, "sandbox-isolate"), { recursive: true });
      const root = fileURLToPath(new URL("..", import.meta.url));
      cpSync(join(root, "package.json"), join(scope, "sandbox-isolate", "package.json"));
      cpSync(join(root, "dist"), join(scope, "sandbox-isolate", "dist"), { recursive: true });
      for (const dependency of ["sandbox-core", "sandbox-guest"]) {
        symlinkSync(join(root, "..", dependency), join(scope, dependency), "dir");
      }
      const copy = pathToFileURL(join(scope, "sandbox-isolate", "dist", "index.js"));
      const { args, env } = plainNodeArgs(
        `
        const engine = new IsolateEngine();
        const result = await engine.execute("2 + 3");
        await engine.destroy();
        process.stdout.write(JSON.stringify({ processMode: engine.processMode, errorCode: result.errorCode, error: result.error }));
      `,
        copy,
      );
      const { stdout } = await run(process.execPath, args, { env, cwd: project, timeout: 30_000 });
      expect(JSON.parse(stdout)).toEqual({
        processMode: "helper",
        errorCode: "SANDBOX_ENGINE_UNAVAILABLE",
        error: `IsolateEngine cannot start: the package isolated-vm is not installed. ${isolatedVmInstallHint(nodeMajor)} (SANDBOX_ENGINE_UNAVAILABLE)`,
      });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
