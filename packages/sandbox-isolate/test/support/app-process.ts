import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isAlive } from "./process-gone.js";

const DIST = new URL("../../dist/index.js", import.meta.url);

/** How an application process ended, with what it wrote to stderr. */
export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** A running `node app.mjs`. */
export interface App {
  readonly child: ChildProcess;
  /** The next line the application writes to stdout, parsed as JSON. */
  line(): Promise<unknown>;
  readonly exited: Promise<AppExit>;
}

/**
 * Write `body` as `app.mjs` into a new temporary directory, after a line that
 * imports `IsolateEngine` from the built package and a helper `isAlive(pid)`,
 * and run it with a plain `node` (plus `flags`; no NODE_OPTIONS or NODE_PATH)
 * while `use` runs. Afterwards the application is killed if it still runs and
 * the directory is removed.
 */
export async function withApp<T>(
  body: string,
  options: { flags?: string[]; detached?: boolean },
  use: (app: App) => Promise<T>,
): Promise<T> {
  if (!existsSync(DIST)) throw new Error("dist/index.js is missing: run `pnpm build` first");
  const dir = mkdtempSync(join(tmpdir(), "suaveplan-isolate-app-"));
  const file = join(dir, "app.mjs");
  writeFileSync(
    file,
    `const { IsolateEngine } = await import(${JSON.stringify(DIST.href)});
const isAlive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const print = (value) => process.stdout.write(JSON.stringify(value) + "\\n");
${body}`,
  );
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_PATH;
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [...(options.flags ?? []), file], {
    env,
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // On `exit`, not `close`: a helper holding the inherited stderr open must not hide the exit.
  const exited = new Promise<AppExit>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  let buffered = "";
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    for (let end = buffered.indexOf("\n"); end !== -1; end = buffered.indexOf("\n")) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const next = waiting.shift();
      if (next === undefined) lines.push(line);
      else next(line);
    }
  });
  const line = async (): Promise<unknown> => {
    const text =
      lines.shift() ??
      (await Promise.race([
        new Promise<string>((resolve) => waiting.push(resolve)),
        exited.then(({ code, signal, stderr: text }) => {
          throw new Error(`the application ended (${signal ?? code}) before writing a line: ${text}`);
        }),
      ]));
    return JSON.parse(text);
  };
  try {
    return await use({ child, line, exited });
  } finally {
    if (
      child.pid !== undefined &&
      child.exitCode === null &&
      child.signalCode === null &&
      isAlive(child.pid)
    ) {
      child.kill("SIGKILL");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
