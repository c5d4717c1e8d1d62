import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A `redis-server` of its own, on a unix socket in a temp dir (no TCP port, no files kept). */
export interface RedisServer {
  /** `unix:///…/redis.sock`: pass as `connection`. */
  readonly url: string;
  /** The socket path. */
  readonly socket: string;
  /** The server's pid. */
  readonly pid: number;
  /** Kill it (SIGKILL) and start a fresh one on the same socket: everything not persisted is gone. */
  restart(): Promise<void>;
  /** Stop it and remove its temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** True when a `redis-server` binary is on PATH. */
export function hasRedisServer(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Start `redis-server` on a unix socket in a new temp dir, without persistence
 * (`--save "" --appendonly no`) unless `appendonly` is set. For tests and
 * examples; never the system service.
 */
export async function startRedisServer(options: { appendonly?: boolean } = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "suaveplan-redis-"));
  const socket = join(dir, "redis.sock");
  const args = [
    "--port",
    "0",
    "--unixsocket",
    socket,
    "--unixsocketperm",
    "700",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    options.appendonly === true ? "yes" : "no",
    "--appendfsync",
    "always",
  ];
  let child = await launch(args, socket);
  let stopped: Promise<void> | undefined;
  return {
    url: `unix://${socket}`,
    socket,
    get pid() {
      return child.pid as number;
    },
    async restart() {
      await kill(child);
      child = await launch(args, socket);
    },
    stop() {
      stopped ??= kill(child).then(() => rm(dir, { recursive: true, force: true }));
      return stopped;
    },
  };
}

async function launch(args: string[], socket: string): Promise<ChildProcess> {
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(check);
      child.kill("SIGKILL"); // never leave a server behind
      reject(new Error(`redis-server did not start on ${socket}:\n${output}`));
    }, 10_000);
    const check = setInterval(() => {
      if (/ready to accept connections/i.test(output)) {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
    }, 10);
    child.once("exit", (code) => {
      clearTimeout(timer);
      clearInterval(check);
      reject(new Error(`redis-server exited (${code}):\n${output}`));
    });
  });
  return child;
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
