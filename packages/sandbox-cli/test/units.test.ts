// Durations and sizes on the command line: the built CLI, `run` and `exec` reading one vocabulary.
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js");
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-cli-units-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: scratch,
      env: { ...process.env, XDG_CACHE_HOME: join(scratch, "cache") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const run: Run = { code: null, stdout: "", stderr: "" };
    child.stdout.on("data", (d: Buffer) => {
      run.stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      run.stderr += d.toString();
    });
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(killer);
      resolve({ ...run, code });
    });
  });
}

/** The first `error:` line of stderr. */
const errorLine = (run: Run): string | undefined =>
  run.stderr.split("\n").find((l) => l.startsWith("error:"));

const BARE =
  "It needs a unit, e.g. 30ms or 30s (a bare number is refused: earlier releases read it in different units).";

describe("run and exec read durations and sizes the same way", () => {
  it("a bare --timeout 30 is refused by both, with the same reason (it meant 30 ms in run, 30 s in exec)", async () => {
    const settings = join(scratch, "settings.json");
    writeFileSync(settings, JSON.stringify({ mode: "read-only", timeout: "30" }));
    const runs = await Promise.all([
      cli(["run", "--engine", "vm", "--timeout", "30", "-e", "1"]),
      cli(["exec", "--mode", "read-only", "--timeout", "30", "--", "true"]),
      cli(["exec", "--settings", settings, "--", "true"]),
      cli(["run", "--engine", "vm", "--memory", "64", "-e", "1"]),
      cli(["run", "--engine", "vm", "--max-output", "64mb", "-e", "1"]),
    ]);
    expect(runs.map((run) => ({ code: run.code, error: errorLine(run) }))).toEqual([
      { code: 2, error: `error: option '--timeout <duration>' argument '30' is invalid. ${BARE}` },
      { code: 125, error: `error: option '--timeout <duration>' argument '30' is invalid. ${BARE}` },
      {
        code: 125,
        error: `error: --settings ${settings}: timeout: "30" needs a unit, e.g. 30ms or 30s (a bare number is refused: earlier releases read it in different units)`,
      },
      {
        code: 2,
        error:
          "error: option '--memory <size>' argument '64' is invalid. It needs a unit, e.g. 64MiB or 64KiB (a bare number is refused: earlier releases read it in different units).",
      },
      {
        code: 2,
        error:
          "error: option '--max-output <size>' argument '64mb' is invalid. It has an unknown unit \"mb\" (did you mean MiB (1048576 bytes) or MB (1000000 bytes)?); units are B, KiB, MiB, GiB, kB, MB, GB.",
      },
    ]);
  });

  it("30ms is 30 ms in run and in exec; 1.5s is 1500 ms", async () => {
    const [run, runSeconds, exec] = await Promise.all([
      cli(["run", "--engine", "vm", "--timeout", "30ms", "-e", "for (;;) {}", "--json"]),
      cli(["run", "--engine", "vm", "--timeout", "1.5s", "-e", "for (;;) {}", "--json"]),
      cli(["exec", "--mode", "read-only", "--timeout", "30ms", "--", "sleep", "5"]),
    ]);
    expect([
      run.code,
      JSON.parse(run.stdout).error,
      runSeconds.code,
      JSON.parse(runSeconds.stdout).error,
    ]).toEqual([
      3,
      "Execution timed out after 30 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      3,
      "Execution timed out after 1500 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
    ]);
    expect({
      code: exec.code,
      line: exec.stderr
        .trim()
        .split("\n")
        .at(-1)
        ?.replace(/ \(.*\)$/, ""),
    }).toEqual({
      code: 124,
      line: "[timeout] killed after 30 ms",
    });
  });

  it("--memory 64MiB and --max-output 1KiB reach the engine as bytes", async () => {
    const [logs, memory] = await Promise.all([
      cli([
        "run",
        "--engine",
        "isolate",
        "--max-output",
        "1KiB",
        "--json",
        "-e",
        "console.log('x'.repeat(5000)); 1",
      ]),
      cli([
        ...["run", "--engine", "isolate", "--memory", "64MiB", "--json", "-e"],
        "const a = []; for (let i = 0; i < 100; i++) a.push(new Float64Array(131072)); a.length",
      ]),
    ]);
    expect(
      JSON.parse(logs.stdout).logs.map((l: { level: string; message: string }) => [
        l.level,
        l.message.length,
      ]),
    ).toEqual([
      ["log", 1024],
      ["warn", "[output truncated at 1024 bytes]".length],
    ]);
    // About 100 MiB of live arrays: over 64 MiB.
    expect({ code: memory.code, errorCode: JSON.parse(memory.stdout).errorCode }).toEqual({
      code: 3,
      errorCode: "SANDBOX_MEMORY_EXCEEDED",
    });
  });
});
