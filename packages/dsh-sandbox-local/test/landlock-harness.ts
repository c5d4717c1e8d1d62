// Shared helpers of the landlock*.test.ts files: a private launcher build, a
// host fixture (workspace, outside directory, temp area) and an async runner.
import { type SpawnOptions, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ConfinedArgv, RunnerFailureRule } from "@suaveplan/dsh-sandbox";
import type { BackendProbeResult, LocalBackend, LocalConfinePolicy } from "../src/backend/index.js";

export const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

/** Compile the launcher into `dir` with the package's build script; returns its path. */
export function buildLauncherInto(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  const out = join(dir, "landlock-launcher");
  const result = spawnSync(
    process.execPath,
    [join(PACKAGE_DIR, "scripts", "build-launcher.mjs"), "--out", out],
    {
      cwd: PACKAGE_DIR,
      env,
      encoding: "utf8",
    },
  );
  if (result.status !== 0)
    throw new Error(`build-launcher.mjs exited with ${result.status}: ${result.stderr}`);
  return out;
}

/** The kernel's Landlock ABI as the launcher reports it. */
export function kernelAbi(launcherPath: string): number {
  return Number.parseInt(spawnSync(launcherPath, ["--abi"], { encoding: "utf8" }).stdout.trim(), 10);
}

/** A host fixture: a workspace, an outside directory holding a secret file, a private temp area. */
export interface Fixture {
  root: string;
  workspace: string;
  outside: string;
  secret: string;
  tempDir: string;
  dispose(): void;
}

export const SECRET_TEXT = "original secret\n";

export function createFixture(): Fixture {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "landlock-test-")));
  const workspace = join(root, "ws");
  const outside = join(root, "outside");
  const tempDir = join(root, "tmp");
  for (const dir of [workspace, outside, tempDir]) mkdirSync(dir);
  const secret = join(outside, "secret.txt");
  writeFileSync(secret, SECRET_TEXT);
  return {
    root,
    workspace,
    outside,
    secret,
    tempDir,
    dispose: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A fully specified local policy for `fixture`. */
export function policyFor(fixture: Fixture, overrides: Partial<LocalConfinePolicy> = {}): LocalConfinePolicy {
  return {
    mode: "workspace-write",
    workspaceRoot: fixture.workspace,
    network: "allow",
    protectedPaths: [],
    tempDir: fixture.tempDir,
    ...overrides,
  };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Spawn `argv` and collect its output; kills it after `timeoutMs`. */
export function run(
  argv: readonly string[],
  options: SpawnOptions = {},
  timeoutMs = 20_000,
): Promise<RunResult> {
  const [program, ...args] = argv;
  if (program === undefined) return Promise.reject(new Error("empty argv"));
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Run a bash script confined by `backend` under `policy`, with extra env and cwd. */
export function runConfined(
  backend: LocalBackend,
  probe: BackendProbeResult,
  policy: LocalConfinePolicy,
  script: string,
  env: Record<string, string> = {},
  cwd = policy.workspaceRoot,
): Promise<RunResult & { confined: ConfinedArgv }> {
  const confined = backend.wrap(["bash", "-c", script], policy, probe);
  return run(confined.argv, { cwd, env: { ...process.env, ...confined.env, ...env } }).then((result) => ({
    ...result,
    confined,
  }));
}

/** The consumer-side runner-failure classification of the contract, for asserting rules match. */
export function runnerFailureLine(
  rules: readonly RunnerFailureRule[],
  code: number | null,
  stderr: string,
): string | undefined {
  if (code === null || code === 0) return undefined;
  for (const rule of rules) {
    if (rule.allowedExitCodes !== undefined && !rule.allowedExitCodes.includes(code)) continue;
    const informational = new Set((rule.informationalLines ?? []).map((l) => l.toLowerCase()));
    for (const line of stderr.split("\n")) {
      if (informational.has(line.toLowerCase())) continue;
      if (rule.fatalSignatures.some((sig) => line.toLowerCase().includes(sig.toLowerCase()))) return line;
    }
  }
  return undefined;
}

/** True when some line of `stderr` carries one of `signatures` (case-insensitive). */
export function matchesDenial(signatures: readonly string[], stderr: string): boolean {
  const text = stderr.toLowerCase();
  return signatures.some((sig) => text.includes(sig.toLowerCase()));
}
