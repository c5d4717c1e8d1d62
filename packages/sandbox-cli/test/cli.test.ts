import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describeGuestGlobals } from "@suaveplan/sandbox-core/guest-script";
import { renderJson, renderText } from "@suaveplan/sandbox-core/render";
import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
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

function cli(
  args: string[],
  input?: string,
  cwd = repoRoot,
  env: NodeJS.ProcessEnv = {},
  killAfterMs = 60_000,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, ...args], {
      cwd,
      // The CLI's probe cache goes to the scratch directory, never the user's home.
      env: { ...process.env, XDG_CACHE_HOME: join(scratch, "cache"), ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    // A CLI that never ends fails its test (code null) instead of hanging the suite.
    const killer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.once("close", () => clearTimeout(killer));
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

// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;
const fixtures = join(packageDir, "test", "fixtures");

/** Whether any process is left in process group `pgid`, after up to 2 s for the last ones to be reaped. */
async function groupLeft(pgid: number): Promise<boolean> {
  for (let tries = 0; tries < 20; tries++) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

interface GroupRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** From the SIGINT (or the start, when none was sent) to the exit, in ms. */
  ms: number;
  /** Whether a process of the group outlived its leader. */
  left: boolean;
}

/**
 * Spawn `command` as the leader of its own process group, as a terminal's
 * foreground job; when `interruptOn` appears on its stderr, send SIGINT to the
 * whole group 200 ms later, as Ctrl-C does. The group is killed after 25 s.
 */
function groupRun(command: string, args: string[], interruptOn?: string): Promise<GroupRun> {
  return new Promise((resolve, reject) => {
    let started = performance.now();
    const child = spawn(command, args, { cwd: repoRoot, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const pgid = child.pid as number;
    const run = { stdout: "", stderr: "" };
    let sent = false;
    child.stdout.on("data", (d: Buffer) => {
      run.stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      run.stderr += d.toString();
      if (interruptOn !== undefined && !sent && run.stderr.includes(interruptOn)) {
        sent = true;
        setTimeout(() => {
          started = performance.now();
          process.kill(-pgid, "SIGINT");
        }, 200);
      }
    });
    const kill = () => {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // the group is gone already
      }
    };
    const killer = setTimeout(kill, 25_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(killer);
      const ms = performance.now() - started;
      void groupLeft(pgid).then((left) => {
        if (left) kill();
        resolve({ code, ...run, ms, left });
      });
    });
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
    const timedOut = await cli(["run", "-e", "while (true) {}", "--timeout", "100ms", "--json"]);
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
    expect(usage[2]?.stderr).toContain(
      "error: option '--timeout <duration>' argument '-5' is invalid. It must not be negative;",
    );
  });

  it("prints a failure as one line that names its code once", async () => {
    const timedOut = await cli(["run", "--engine", "spawn", "--timeout", "200ms", "-e", "while (true) {}"]);
    expect(timedOut.code).toBe(3);
    const line = timedOut.stdout.split("\n").find((l) => l.startsWith("✘ spawn:")) ?? "";
    expect(line).toMatch(
      /^✘ spawn: SANDBOX_TIMEOUT: Execution timed out after 200 ms \(sync code, promises and timers share this budget\) \(\d+\.\d ms\)$/,
    );
    expect(line.split("SANDBOX_TIMEOUT").length - 1).toBe(1);
  });

  it("names the code once when the engine's message ends with it", async () => {
    const run = await cli(["run", "--engine", "worker", "--memory", "1MiB", "-e", "1"]);
    const json = await cli(["run", "--engine", "worker", "--memory", "1MiB", "-e", "1", "--json"]);
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
      "16MiB",
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
      ENGINE_NAMES.map((engine) => [engine, true, 42, [{ level: "log", message: "x is 41" }]]),
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
        /^✘ isolate: SANDBOX_TYPECHECK_FAILED: TypeScript found 1 error, nothing ran: line 3, column 7: Type 'number' is not assignable to type 'string'\. \(TS2322\) \(\d+\.\d ms\)$/,
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
        ...describeGuestGlobals()
          .split("\n")
          .map((line) => `// ${line}`),
        "",
      ].join("\n"),
    );
  });

  it("runs the example under every engine with a line per engine", async () => {
    const run = await cli(["run", "examples/agent-snippet.js", "--engine", "all"]);
    expect(run.code).toBe(0);
    for (const engine of ENGINES) {
      expect(run.stdout).toMatch(new RegExp(`✔ ${engine}: \\{\n  orders: 5,\n  revenue: 1111.75,`));
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
      "10s",
    ]);
    expect(run.code).toBe(0);
    const first = run.stdoutTimes.find((c) => c.text.includes("first"));
    expect(first).toBeDefined();
    expect(run.exitedAt - (first?.at ?? run.exitedAt)).toBeGreaterThanOrEqual(1000);
  });

  it("output into a closed pipe (| head -2) ends at once with 141 on every engine, leaving no process", async () => {
    // Output that never ends on its own: a finite burst can fit in the pipe's
    // buffer before head exits, and then nothing ever meets the closed pipe.
    const code =
      "for (let i = 0; ; i++) { console.log('line', i); await new Promise((r) => setTimeout(r, 1)); }";
    const runs = await Promise.all(
      ENGINES.map((engine) =>
        groupRun("bash", [
          "-c",
          `set -o pipefail; "${process.execPath}" "${bin}" run --engine ${engine} --timeout 60s -e "${code}" | head -2`,
        ]),
      ),
    );
    expect(
      runs.map((run) => ({
        code: run.code,
        stdout: run.stdout.split("\n").slice(1),
        stderr: run.stderr,
        prompt: run.ms < 15_000,
        left: run.left,
      })),
    ).toEqual(
      ENGINES.map(() => ({ code: 141, stdout: ["line 0", ""], stderr: "", prompt: true, left: false })),
    );
  });

  it("Ctrl-C stops busy guest code at once with 130 on every engine, leaving no process", async () => {
    const runs = await Promise.all(
      ENGINES.map((engine) =>
        groupRun(
          process.execPath,
          [
            ...[bin, "run", "--engine", engine, "--timeout", "60s"],
            ...["--tools", join(fixtures, "ready-tool.mjs"), "-e", "await tools.ready({}); while (true) {}"],
          ],
          "guest running\n",
        ),
      ),
    );
    expect(
      runs.map((run) => ({ code: run.code, stderr: run.stderr, prompt: run.ms < 15_000, left: run.left })),
    ).toEqual(
      ENGINES.map(() => ({
        code: 130,
        stderr: "guest running\nsuaveplan-sandbox: interrupted by SIGINT\n",
        prompt: true,
        left: false,
      })),
    );
  });

  it("prints results in util.inspect's notation and --json as valid JSON with $-tags, on every engine", async () => {
    let dag: unknown = ["x"];
    for (let i = 0; i < 40; i++) dag = [dag, dag]; // 41 arrays, 2^40 paths: JSON.stringify never ends
    const table: Array<[code: string, text: string, json: unknown]> = [
      ["1n", "1n", { $bigint: "1" }],
      ["new Map([[1, 2]])", "Map(1) { 1 => 2 }", { $map: [[1, 2]] }],
      ["new Set(['a'])", "Set(1) { 'a' }", { $set: ["a"] }],
      ["new Error('x')", "[Error: x]", { $error: { name: "Error", message: "x" } }],
      ["NaN", "NaN", { $number: "NaN" }],
      [
        "let a = ['x']; for (let i = 0; i < 40; i++) a = [a, a]; a",
        renderText(dag).text,
        renderJson(dag).json,
      ],
    ];
    const run = (json: boolean) =>
      Promise.all(
        table.map(([code]) =>
          cli(
            ["run", "--engine", "all", "-e", code, ...(json ? ["--json"] : [])],
            undefined,
            repoRoot,
            {},
            30_000,
          ),
        ),
      );
    const texts = await run(false);
    const jsons = await run(true);
    const printed = (stdout: string) =>
      Object.fromEntries(
        [...stdout.matchAll(/^✔ (\w+): ([\s\S]*?) \(\d+\.\d ms\)$/gm)].map((m) => [m[1], m[2]]),
      );
    const cells = (stdout: string) =>
      Object.fromEntries(
        [...stdout.matchAll(/^(\w+) +ok +[\d.]+ ms +\d+ +(.*)$/gm)].map((m) => [m[1], m[2]]),
      );
    const values = (stdout: string) =>
      Object.fromEntries(
        (JSON.parse(stdout) as Array<{ engine: string; result: unknown }>).map((r) => [r.engine, r.result]),
      );
    const perEngine = (value: unknown) => Object.fromEntries(ENGINES.map((engine) => [engine, value]));
    expect(
      table.map(([code], i) => ({
        code,
        exit: [texts[i]?.code, jsons[i]?.code],
        printed: printed(texts[i]?.stdout ?? ""),
        cell: cells(texts[i]?.stdout ?? ""),
        json: values(jsons[i]?.stdout ?? "[]"),
      })),
    ).toEqual(
      table.map(([code, text, json]) => ({
        code,
        exit: [0, 0],
        printed: perEngine(text),
        cell: perEngine(
          text
            .replace(/\s*\n\s*/g, " ")
            .slice(0, 60)
            .trimEnd(),
        ),
        json: perEngine(json),
      })),
    );
  }, 120_000);

  it("runs on isolate unless --engine says otherwise; without isolated-vm that is a usage error naming the way on", async () => {
    const hidden = { NODE_OPTIONS: `--require ${join(fixtures, "hide-isolated-vm.cjs")}` };
    const [plain, missing, explicit] = await Promise.all([
      cli(["run", "-e", "6 * 7"]),
      cli(["run", "-e", "6 * 7"], undefined, repoRoot, hidden),
      cli(["run", "-e", "6 * 7", "--engine", "vm"], undefined, repoRoot, hidden),
    ]);
    expect(
      plain.stdout
        .replace(/\(\d+\.\d ms\)/, "(<n> ms)")
        .split("\n")
        .slice(1),
    ).toEqual(["✔ isolate: 42 (<n> ms)", ""]);
    expect(plain.stdout).toMatch(/^── isolate: V8 isolate \(isolated-vm\)/);
    const major =
      Number.parseInt(process.versions.node, 10) < 22
        ? 5
        : Number.parseInt(process.versions.node, 10) < 24
          ? 6
          : 7;
    expect({ code: missing.code, stdout: missing.stdout, stderr: missing.stderr }).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        "error: run uses the isolate engine unless --engine says otherwise (a V8 isolate is the only JavaScript security boundary here), and its package isolated-vm is not installed.",
        `Install it with \`npm i -g isolated-vm@${major}\` (the CLI installed globally; \`npm i isolated-vm@${major}\` in a project; the newest major for Node ${process.versions.node.split(".")[0]}, a native addon), or choose another engine:`,
        "  --engine spawn   a child Node process under Node's permission model (a security boundary only when the OS also confines it)",
        "  --engine worker  a worker thread with its own heap and memory limit (NOT a security boundary)",
        "  --engine vm      a node:vm context in the CLI's own process (NOT a security boundary: for code you trust)",
        "",
      ].join("\n"),
    });
    expect({ code: explicit.code, line: explicit.stdout.split("\n")[1] }).toEqual({
      code: 0,
      line: expect.stringMatching(/^✔ vm: 42 \(\d+\.\d ms\)$/),
    });
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
