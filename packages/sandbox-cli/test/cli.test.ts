import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(packageDir, "dist", "bin.js");
const repoRoot = join(packageDir, "..", "..");
const scratch = mkdtempSync(join(tmpdir(), "suaveplan-cli-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When each stdout chunk arrived, ms after start. */
  stdoutTimes: Array<{ at: number; text: string }>;
  exitedAt: number;
}

function cli(args: string[], input?: string, cwd = repoRoot): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      // The CLI's probe cache goes to the scratch directory, never the user's home.
      env: { ...process.env, XDG_CACHE_HOME: join(scratch, "cache") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const run: CliRun = { code: null, stdout: "", stderr: "", stdoutTimes: [], exitedAt: 0 };
    child.stdout.on("data", (d: Buffer) => {
      run.stdout += d.toString();
      run.stdoutTimes.push({ at: performance.now() - started, text: d.toString() });
    });
    child.stderr.on("data", (d: Buffer) => {
      run.stderr += d.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      run.code = code;
      run.exitedAt = performance.now() - started;
      resolve(run);
    });
    child.stdin.end(input ?? "");
  });
}

describe("suaveplan-sandbox run", () => {
  it("prints the SandboxResult as JSON and exits 0 on success", async () => {
    const run = await cli(["run", "-e", "console.log('hi'); 2 + 3", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      success: true,
      result: 5,
      logs: [{ level: "log", message: "hi" }],
    });
  });

  it("exits 1 when the code fails, 3 on timeout, 2 on usage errors", async () => {
    const failed = await cli(["run", "-e", "throw new Error('nope')"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("nope");
    const timedOut = await cli(["run", "-e", "while (true) {}", "--timeout", "100", "--json"]);
    expect(timedOut.code).toBe(3);
    expect(JSON.parse(timedOut.stdout)).toMatchObject({ success: false, errorCode: "SANDBOX_TIMEOUT" });
    const usage = await Promise.all([
      cli(["run"]),
      cli(["run", "-e", "1", "--engine", "docker"]),
      cli(["run", "-e", "1", "--timeout", "-5"]),
      cli(["run", "-e", "1", "--context", "[1]"]),
      cli(["run", "does-not-exist.js"]),
      cli(["frobnicate"]),
    ]);
    expect(usage.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(usage[1]?.stderr).toContain("--engine: unknown engine");
    expect(usage[2]?.stderr).toContain("--timeout must be a positive whole number");
  });

  it("prints a failure as one line that names its code once", async () => {
    const timedOut = await cli(["run", "--engine", "spawn", "--timeout", "200", "-e", "while (true) {}"]);
    expect(timedOut.code).toBe(3);
    const line = timedOut.stdout.split("\n").find((l) => l.startsWith("✘ spawn:")) ?? "";
    expect(line).toMatch(
      /^✘ spawn: SANDBOX_TIMEOUT: Execution timed out after 200 ms \(sync code, promises and timers share this budget\) \(\d+\.\d ms\)$/,
    );
    expect(line.split("SANDBOX_TIMEOUT").length - 1).toBe(1);
  });

  it("names the code once when the engine's message ends with it", async () => {
    const run = await cli(["run", "--engine", "worker", "--memory", "1", "-e", "1"]);
    const json = await cli(["run", "--engine", "worker", "--memory", "1", "-e", "1", "--json"]);
    const message =
      "Execution exceeded its memory limit of 1048576 bytes: a worker needs at least 12582912 bytes (12 MiB) to start, so none was started";
    expect(JSON.parse(json.stdout).error).toBe(`${message} (SANDBOX_MEMORY_EXCEEDED)`);
    const line = run.stdout.split("\n").find((l) => l.startsWith("✘ worker:")) ?? "";
    expect(line).toMatch(
      /^✘ worker: SANDBOX_MEMORY_EXCEEDED: Execution exceeded its memory limit of 1048576 bytes: a worker needs at least 12582912 bytes \(12 MiB\) to start, so none was started \(\d+\.\d ms\)$/,
    );
    expect(line.split("SANDBOX_MEMORY_EXCEEDED").length - 1).toBe(1);
  });

  it("exits 3 when the memory limit is hit", async () => {
    const run = await cli([
      "run",
      "-e",
      "const a = []; for (;;) a.push('x'.repeat(1e6) + Math.random())",
      "--engine",
      "isolate",
      "--memory",
      "16",
      "--json",
    ]);
    expect(run.code).toBe(3);
    expect(JSON.parse(run.stdout)).toMatchObject({ success: false, errorCode: "SANDBOX_MEMORY_EXCEEDED" });
  });

  it("reads code from standard input with - and passes --context as globals", async () => {
    const run = await cli(["run", "-", "--engine", "spawn", "--context", '{"n": 6}', "--json"], "n * 7");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).result).toBe(42);
  });

  it("runs a .ts or .mts FILE as TypeScript, on every engine alike", async () => {
    const file = join(scratch, "snippet.ts");
    writeFileSync(
      file,
      "interface P { x: number }\nconst p: P = { x: 41 };\nconsole.log('x is', p.x as number);\np.x + 1\n",
    );
    writeFileSync(join(scratch, "snippet.mts"), readFileSync(file, "utf8"));
    const runs = await Promise.all([
      cli(["run", file, "--engine", "all", "--json"]),
      cli(["run", join(scratch, "snippet.mts"), "--json"]),
    ]);
    expect(runs.map((r) => r.code)).toEqual([0, 0]);
    const all = JSON.parse(runs[0]?.stdout ?? "[]") as Array<Record<string, unknown>>;
    expect(all.map((r) => [r.engine, r.success, r.result, r.logs])).toEqual(
      ["vm", "worker", "spawn", "isolate"].map((engine) => [
        engine,
        true,
        42,
        [{ level: "log", message: "x is 41" }],
      ]),
    );
    expect(JSON.parse(runs[1]?.stdout ?? "{}")).toMatchObject({ success: true, result: 42 });
  });

  it("--ts runs -e and stdin as TypeScript; without it, types are a SyntaxError", async () => {
    const [inline, stdin, plain] = await Promise.all([
      cli(["run", "-e", "const n: number = 41; n + 1", "--ts", "--json"]),
      cli(["run", "-", "--ts", "--json"], "const n: number = 6;\nn * 7"),
      cli(["run", "-e", "const n: number = 41; n + 1", "--json"]),
    ]);
    expect([inline.code, stdin.code, plain.code]).toEqual([0, 0, 1]);
    expect(JSON.parse(inline.stdout).result).toBe(42);
    expect(JSON.parse(stdin.stdout).result).toBe(42);
    expect(JSON.parse(plain.stdout).errorCode).toBe("SANDBOX_SYNTAX_ERROR");
  });

  it("--typecheck fails before the code runs, printing each diagnostic at its line:column", async () => {
    const file = join(scratch, "bad.ts");
    writeFileSync(file, "console.log('ran');\nconst n: number = 41;\nconst s: string = n;\ns");
    const run = await cli(["run", file, "--typecheck"]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n").slice(1)).toEqual([
      expect.stringMatching(
        /^✘ vm: SANDBOX_TYPECHECK_FAILED: TypeScript found 1 error, nothing ran: line 3, column 7: Type 'number' is not assignable to type 'string'\. \(TS2322\) \(\d+\.\d ms\)$/,
      ),
      "  3:7  TS2322  Type 'number' is not assignable to type 'string'.",
      "",
    ]);
    const json = await cli(["run", "-e", "const n: number = 'x'", "--ts", "--typecheck", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      success: false,
      errorCode: "SANDBOX_TYPECHECK_FAILED",
      logs: [],
      diagnostics: [
        { line: 1, column: 7, message: "Type 'string' is not assignable to type 'number'.", code: 2322 },
      ],
    });
    const ok = await cli(["run", "-e", "const n: number = 41; n + 1", "--ts", "--typecheck", "--json"]);
    expect(JSON.parse(ok.stdout)).toMatchObject({ success: true, result: 42 });
  });

  it("--typecheck without TypeScript input is a usage error", async () => {
    const run = await cli(["run", "-e", "1", "--typecheck"]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({
      code: 2,
      stderr: "error: --typecheck needs TypeScript input: a .ts or .mts FILE, or --ts\n",
    });
  });

  it("--tools loads an ES module of tools; --json carries the journal and usage", async () => {
    const run = await cli([
      "run",
      "-e",
      "await tools.convert({ eur: 2, to: 'NOK' })",
      "--engine",
      "vm",
      "--tools",
      "examples/code-mode/tools.mjs",
      "--json",
    ]);
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect({
      result: result.result,
      calls: result.calls.map((c: { tool: string; status: string }) => [c.tool, c.status]),
      toolCalls: result.usage.toolCalls,
    }).toEqual({
      result: 23.2,
      calls: [["convert", "ok"]],
      toolCalls: 1,
    });
  });

  it("--print-declarations prints the tools' TypeScript declarations", async () => {
    const run = await cli(["run", "--tools", "examples/code-mode/tools.mjs", "--print-declarations"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        "declare const tools: {",
        "  /** Current weather for a city */",
        "  getWeather(input: {",
        "    /** City name, e.g. Paris */",
        "    city: string;",
        "  }): Promise<{ tempC: number; currency: string }>;",
        "  /** Convert an amount of euros into another currency */",
        '  convert(input: { eur: number; to: "EUR" | "NOK" | "JPY" }): Promise<unknown>;',
        "};",
        "",
      ].join("\n"),
    );
  });

  it("runs the example under every engine with a line per engine", async () => {
    const run = await cli(["run", "examples/agent-snippet.js", "--engine", "all"]);
    expect(run.code).toBe(0);
    for (const engine of ["vm", "worker", "spawn", "isolate"]) {
      expect(run.stdout).toMatch(new RegExp(`✔ ${engine}: \\{"orders":5,"revenue":1111.75`));
      expect(run.stdout).toMatch(new RegExp(`^${engine}\\s+ok\\s`, "m"));
    }
    expect(run.stdout).toContain("NOT a security boundary");
  });

  it("streams console output while the code is still running", async () => {
    const run = await cli([
      "run",
      "-e",
      "console.log('first'); await new Promise((r) => setTimeout(r, 1500)); console.log('second'); 1",
      "--engine",
      "worker",
      "--timeout",
      "10000",
    ]);
    expect(run.code).toBe(0);
    const first = run.stdoutTimes.find((c) => c.text.includes("first"));
    expect(first).toBeDefined();
    expect(run.exitedAt - (first?.at ?? run.exitedAt)).toBeGreaterThanOrEqual(1000);
  });

  it("has --help for every command", async () => {
    for (const command of ["run", "exec", "probe", "bench"]) {
      const run = await cli([command, "--help"]);
      expect(run.code, command).toBe(0);
      expect(run.stdout, command).toContain(`Usage: suaveplan-sandbox ${command}`);
    }
    const top = await cli(["--help"]);
    expect(top.stdout).toMatch(/run[\s\S]*exec[\s\S]*probe[\s\S]*bench/);
  });
});

describe("suaveplan-sandbox exec and probe", () => {
  it("denies a write outside the workspace under read-only and reports it", async () => {
    const outside = join(scratch, "outside.txt");
    const workspace = join(scratch, "ws-ro");
    mkdirSync(workspace);
    const run = await cli(
      ["exec", "--mode", "read-only", "--", "sh", "-c", `echo x > ${outside}`],
      undefined,
      workspace,
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("[denied]");
    expect(existsSync(outside)).toBe(false);
  });

  it("allows workspace writes under workspace-write and passes the exit code through", async () => {
    const workspace = join(scratch, "ws-rw");
    mkdirSync(workspace);
    const run = await cli(
      [
        "exec",
        "--mode",
        "workspace-write",
        "--workspace",
        workspace,
        "--",
        "sh",
        "-c",
        "echo hello > made.txt; exit 0",
      ],
      undefined,
      workspace,
    );
    expect(run.code).toBe(0);
    expect(readFileSync(join(workspace, "made.txt"), "utf8")).toBe("hello\n");
    const failing = await cli(
      ["exec", "--mode", "read-only", "--", "sh", "-c", "exit 7"],
      undefined,
      workspace,
    );
    expect(failing.code).toBe(7);
    expect(failing.stderr).toContain("[failed]");
  });

  it("probe reports bwrap as available with full enforcement", async () => {
    const run = await cli(["probe", "--json"]);
    expect(run.code).toBe(0);
    const probes = JSON.parse(run.stdout) as Array<{
      backend: string;
      available: boolean;
      enforcement?: string;
    }>;
    expect(probes.find((p) => p.backend === "bwrap")).toMatchObject({ available: true, enforcement: "full" });
  });

  it("exec requires --mode (usage error: 125)", async () => {
    const run = await cli(["exec", "--", "true"]);
    expect(run.code).toBe(125);
    expect(run.stderr).toContain("--mode");
  });

  it("exec refuses a misspelt --network instead of leaving the network open", async () => {
    const run = await cli(["exec", "--mode", "read-only", "--network", "dney", "--", "true"]);
    expect(run.code).toBe(125);
    expect(run.stderr).toContain("--network");
    expect(run.stderr).toContain("dney");
  });

  it("exec reports a --workspace that does not exist as a usage error naming the flag", async () => {
    const missing = join(scratch, "no-such-workspace");
    const run = await cli(["exec", "--mode", "read-only", "--workspace", missing, "--", "true"]);
    expect(run.code).toBe(125);
    expect(run.stderr).toContain("--workspace");
    expect(run.stderr).toContain("ENOENT");
  });
});
