import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { SandboxWorkerOptions } from "../src/index.js";

const WORKER = fileURLToPath(new URL("./fixtures/worker-process.mjs", import.meta.url));

/** A worker in a process of its own, as production runs it: `kill -9` hits a real process. */
export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly address: string;
  /** What it printed so far. */
  output(): string;
  /** SIGKILL, and wait for the exit. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful close), and wait for the exit code. */
  terminate(): Promise<number | null>;
}

export async function startWorkerProcess(
  options: SandboxWorkerOptions & { toolsModule?: string },
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(options)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output}`)), 20_000);
    const check = setInterval(() => {
      const match = /^ready (\S+)$/m.exec(output);
      if (match !== null) {
        clearInterval(check);
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    }, 10);
    void exited.then((code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}):\n${output}`));
    });
  });
  return {
    child,
    address,
    output: () => output,
    async kill9() {
      child.kill("SIGKILL");
      await exited;
    },
    async terminate() {
      child.kill("SIGTERM");
      return exited;
    },
  };
}
