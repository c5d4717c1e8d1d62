import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import type { SpawnedChild } from "../../src/index.js";

/**
 * A scripted stand-in for a runner child, for the outcomes a real child
 * cannot produce on demand (an `error` event racing `close`, a kill that
 * throws, a timeout racing a result). Everything else is tested with real
 * child processes.
 */
export class FakeChild extends EventEmitter implements SpawnedChild {
  pid: number | undefined = 4242;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly stdin = new PassThrough();
  readonly stderr = new PassThrough();
  readonly protocol = new PassThrough();
  readonly stdio = [this.stdin, null, this.stderr, this.protocol] as const;
  /** Signals passed to kill(), in order. */
  readonly kills: Array<NodeJS.Signals | number | undefined> = [];
  /** Make kill() throw, as some platforms do for an exited process. */
  killThrows = false;
  private readonly written: Buffer[] = [];

  constructor() {
    super();
    this.stdin.on("data", (chunk: Buffer) => this.written.push(chunk));
  }

  kill(signal?: NodeJS.Signals | number): boolean {
    this.kills.push(signal);
    if (this.killThrows) throw new Error("kill ESRCH");
    return true;
  }

  /** What the engine wrote to stdin so far. */
  input(): string {
    return Buffer.concat(this.written).toString("utf8");
  }

  /** Write one protocol line (a frame object, or raw text). */
  send(frame: object | string): void {
    this.protocol.write(typeof frame === "string" ? frame : `${JSON.stringify(frame)}\n`);
  }

  /** Exit like a real child: `exit`, then the pipes end, then `close` once their data is delivered. */
  async exit(code: number | null, signal: NodeJS.Signals | null = null): Promise<void> {
    this.exitCode = code;
    this.signalCode = signal;
    this.emit("exit", code, signal);
    this.protocol.end();
    this.stderr.end();
    await new Promise((resolve) => setImmediate(resolve));
    this.emit("close", code, signal);
  }
}

/** Resolve on the next turn of the event loop (after pending stream data is delivered). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
