import { onStop, type StopOptions, type StopReason, stopReason } from "./process-stop.js";

/** Where the CLI reads and writes; tests pass their own. */
export interface CliIo {
  /** Normal output (results, JSON). */
  stdout: (text: string) => void;
  /** Diagnostics, progress and errors. */
  stderr: (text: string) => void;
  /** Read all of standard input. */
  readStdin: () => Promise<string>;
  /** Current directory for relative paths. */
  cwd: string;
  /** The environment commands pass through from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Register a handler for SIGINT/SIGTERM/EPIPE (and how long it may wind down); returns its unregister function. */
  onStop?: (handler: (reason: StopReason) => void, options?: StopOptions) => () => void;
}

/** The real process streams. */
export function processIo(): CliIo {
  return {
    // Once the reader of standard output is gone, what is left to print goes nowhere.
    stdout: (text) => {
      if (stopReason() !== "EPIPE") process.stdout.write(text);
    },
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    cwd: process.cwd(),
    env: process.env,
    onStop,
  };
}
