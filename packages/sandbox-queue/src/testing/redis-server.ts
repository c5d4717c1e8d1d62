import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
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

/** Servers not stopped yet, with their temp dirs: ended when this process exits, however it exits. */
const live = new Map<RedisServer, { child: () => ChildProcess; dir: string }>();
let exitHook = false;

/**
 * On Linux the server gets SIGKILL when this process dies, even by SIGKILL
 * (util-linux's `setpriv --pdeathsig`, which execs it, so its pid is the
 * server's); elsewhere an exit of this process still ends it.
 */
const PDEATHSIG =
  process.platform === "linux" && spawnSync("setpriv", ["--help"], { stdio: "ignore" }).status === 0;

/**
 * Start `redis-server` on a unix socket in a new temp dir, without persistence
 * (`--save "" --appendonly no`) unless `appendonly` is set. For tests and
 * examples; never the system service. It does not outlive this process: an
 * exit without `stop()` (a `process.exit()`, a crash, a SIGKILL on Linux)
 * ends it too.
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
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const { child: of, dir: at } of live.values()) {
        of().kill("SIGKILL");
        rmSync(at, { recursive: true, force: true });
      }
    });
  }
  const server: RedisServer = {
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
      stopped ??= kill(child).then(async () => {
        live.delete(server);
        await rm(dir, { recursive: true, force: true });
      });
      return stopped;
    },
  };
  live.set(server, { child: () => child, dir });
  return server;
}

async function launch(args: string[], socket: string): Promise<ChildProcess> {
  const child = PDEATHSIG
    ? spawn("setpriv", ["--pdeathsig", "KILL", "redis-server", ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      })
    : spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
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
