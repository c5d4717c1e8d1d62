import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SandboxWorkerOptions } from "../src/index.js";

const WORKER = fileURLToPath(new URL("./fixtures/worker-process.mjs", import.meta.url));

/** A test's node process, given its options as JSON: `kill -9` hits a real process. */
export interface TestProcess {
  readonly child: ChildProcess;
  /** What it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves its exit code once it exited. */
  readonly exited: Promise<number | null>;
  /** SIGKILL (unless it exited already), and wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful close), and wait for the exit code. */
  terminate(): Promise<number | null>;
}

export function startTestProcess(script: string, options: unknown): TestProcess {
  const child = spawn(process.execPath, [script, JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (d: Buffer) => {
    output += d.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async terminate() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

/** A worker in a process of its own, as production runs it, once it printed `ready <address>`. */
export interface WorkerProcess extends TestProcess {
  readonly address: string;
}

export async function startWorkerProcess(
  options: SandboxWorkerOptions & { toolsModule?: string; exitByItself?: boolean },
): Promise<WorkerProcess> {
  const started = startTestProcess(WORKER, options);
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${started.output()}`)), 20_000);
    const check = setInterval(() => {
      const match = /^ready (\S+)$/m.exec(started.output());
      if (match !== null) {
        clearInterval(check);
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    }, 10);
    void started.exited.then((code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}):\n${started.output()}`));
    });
  });
  return { ...started, address };
}
