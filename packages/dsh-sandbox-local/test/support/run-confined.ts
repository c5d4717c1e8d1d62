import { spawn } from "node:child_process";
import type { ConfinedArgv, SandboxPolicy, SandboxProvider } from "@suaveplan/dsh-sandbox";

/** What one confined test run produced. */
export interface ConfinedTestRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  confined: ConfinedArgv;
}

/** Options of {@link runConfined}. */
export interface RunConfinedOptions {
  /** Working directory of the spawned runner (default: the policy's workspace root). */
  cwd?: string;
  /** Extra environment on top of a minimal `PATH` and the confined argv's own `env`. */
  env?: Readonly<Record<string, string>>;
  /** Kill the run after this many ms (default 20 000). */
  timeoutMs?: number;
  /** Merge the confined argv's informational `env` into the environment (default true). */
  mergeConfinedEnv?: boolean;
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Confine `script` (`/bin/sh -c script`) through `provider` and run it with
 * stdio only, the way a consumer must. The confined argv is disposed after the
 * run. Never throws for a failing command; rejects only if spawning fails.
 */
export async function runConfined(
  provider: SandboxProvider,
  script: string,
  policy: SandboxPolicy,
  options: RunConfinedOptions = {},
): Promise<ConfinedTestRun> {
  const confined = provider.confine(["/bin/sh", "-c", script], policy);
  try {
    return await spawnCollect(confined.argv, {
      cwd: options.cwd ?? policy.workspaceRoot,
      env: {
        PATH: DEFAULT_PATH,
        LANG: "C",
        LC_ALL: "C",
        ...options.env,
        ...(options.mergeConfinedEnv === false ? {} : confined.env),
      },
      timeoutMs: options.timeoutMs ?? 20_000,
    }).then((r) => ({ ...r, confined }));
  } finally {
    confined.dispose?.();
  }
}

/** Run `script` unconfined with the same conventions (used by the control tests). */
export async function runUnconfined(
  script: string,
  cwd: string,
  env: Readonly<Record<string, string>> = {},
): Promise<Omit<ConfinedTestRun, "confined">> {
  return spawnCollect(["/bin/sh", "-c", script], {
    cwd,
    env: { PATH: DEFAULT_PATH, LANG: "C", LC_ALL: "C", ...env },
    timeoutMs: 20_000,
  });
}

function spawnCollect(
  argv: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<Omit<ConfinedTestRun, "confined">> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.reject(new Error("empty argv"));
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr });
    });
  });
}
