import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createQueueSandbox } from "@suaveplan/sandbox-queue";
import { hasRedisServer, type RedisServer, startRedisServer } from "@suaveplan/sandbox-queue/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// `suaveplan-sandbox worker`: the built CLI as real processes, against a redis-server of this file's own.
const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(packageDir, "dist", "bin.js");
const fixtures = join(packageDir, "test", "fixtures");
const redisMissing = !hasRedisServer();
if (redisMissing && process.env.CI)
  throw new Error("redis-server is required in CI (apt-get install -y redis-server)");

/** Short intervals, so a test never waits for production defaults. */
const FAST = ["--lock-duration", "1s", "--stalled-interval", "500ms", "--lease", "1s"];
/** The caller's side of the same intervals. */
const CALLER = { lease: "1s", pollInterval: "200ms", lockDuration: "1s", lostAfter: "3s" };
const READY =
  /^suaveplan-sandbox worker: ready — queue (\S+), engines (\S+), concurrency (\d+), inbox (\S+)$/m;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI to its end (killed after 30 s, so a hang fails instead of stalling the suite). */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const { SUAVEPLAN_REDIS_URL: _, ...inherited } = process.env;
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const run: CliRun = { code: null, stdout: "", stderr: "" };
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

/** A `worker` process, leader of its own process group (so what it leaves behind can be found). */
interface WorkerCli {
  readonly child: ChildProcess;
  readonly address: string;
  stderr(): string;
  readonly exited: Promise<number | null>;
}

const started: WorkerCli[] = [];

async function startWorker(args: string[]): Promise<WorkerCli> {
  const child = spawn(process.execPath, [bin, "worker", ...args], {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the worker printed no ready line:\n${stderr}`)), 25_000);
    const check = setInterval(() => {
      const address = READY.exec(stderr)?.[4];
      if (address === undefined) return;
      clearInterval(check);
      clearTimeout(timer);
      resolve(address);
    }, 20);
    void exited.then((code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`the worker exited (${code}) before it was ready:\n${stderr}`));
    });
  });
  const worker = { child, address, stderr: () => stderr, exited };
  started.push(worker);
  return worker;
}

/** Whether any process is left in process group `pgid`, after up to 2 s for the last ones to be reaped. */
async function groupLeft(pgid: number): Promise<boolean> {
  for (let tries = 0; tries < 20; tries++) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

describe.skipIf(redisMissing)("suaveplan-sandbox worker against a real redis-server", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    // Every worker still up stops: gracefully first, then its whole group is killed.
    await Promise.all(
      started.map(async ({ child, exited }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill("SIGTERM");
        const code = await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
        if (code === undefined) process.kill(-(child.pid as number), "SIGKILL");
      }),
    );
    await redis?.stop();
  });

  it("--tools runs worker-side tools on the worker and --prefix keys the queue (a caller with another prefix is not served)", async () => {
    const worker = await startWorker([
      "--redis",
      redis.url,
      "--queue",
      "detached",
      "--prefix",
      "tenant-a",
      "--engine",
      "worker",
      "--tools",
      join(fixtures, "worker-side-tools.mjs"),
      ...FAST,
    ]);
    const options = { connection: redis.url, queue: "detached", remoteEngine: "worker", ...CALLER };
    const served = createQueueSandbox({ ...options, prefix: "tenant-a" }, { timeout: "5s" });
    const other = createQueueSandbox(
      { ...options, prefix: "tenant-b", dispatchTimeout: "1s" },
      { timeout: "5s" },
    );
    try {
      const [mine, theirs] = await Promise.all([
        served.execute("await tools.workerPid({})"),
        other.execute("await tools.workerPid({})"),
      ]);
      expect([mine.result, theirs.errorCode]).toEqual([worker.child.pid, "SANDBOX_DISPATCH_TIMEOUT"]);
    } finally {
      await Promise.all([served.destroy(), other.destroy()]);
    }
  });

  // On the plain-queues transport; the other tests use the default, the Relay.
  it("two worker processes serve one caller, whose tool runs in the caller", async () => {
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        startWorker([
          "--redis",
          redis.url,
          "--queue",
          "serve",
          "--concurrency",
          "1",
          "--transport",
          "queues",
          ...FAST,
        ]),
      ),
    );
    expect(READY.exec(a?.stderr() ?? "")?.slice(1, 4)).toEqual(["serve", "isolate", "1"]);
    expect(a?.address).not.toBe(b?.address);
    // Each worker runs one job at a time: the two calls meet in the tool only when both workers run one each.
    const inputs: number[] = [];
    let meet: () => void = () => undefined;
    const together = new Promise<void>((resolve) => {
      meet = resolve;
    });
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "serve", transport: "queues", ...CALLER },
      {
        timeout: "15s",
        tools: {
          meet: {
            description: "waits until the other run calls it too",
            inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
            execute: async ({ n }: { n: number }) => {
              inputs.push(n);
              if (inputs.length === 2) meet();
              await together;
              return n * 10;
            },
          },
        },
      },
    );
    try {
      const results = await Promise.all(
        [1, 2].map((n) => sandbox.execute(`const got = await tools.meet({ n: ${n} }); got + ${n}`)),
      );
      expect(results.map(({ success, result, error }) => ({ success, result, error }))).toEqual([
        { success: true, result: 11, error: undefined },
        { success: true, result: 22, error: undefined },
      ]);
      expect(inputs.sort()).toEqual([1, 2]);
    } finally {
      await sandbox.destroy();
    }
  }, 60_000);

  it("SIGTERM lets the running job finish (tool calls still answered), its result reaches the caller, exit 0, no process left", async () => {
    const worker = await startWorker(["--redis", redis.url, "--queue", "drain", "--drain", "8s", ...FAST]);
    const pgid = worker.child.pid as number;
    const calls: string[] = [];
    const sandbox = createQueueSandbox(
      { connection: redis.url, queue: "drain", ...CALLER },
      {
        timeout: "10s",
        tools: {
          step: {
            description: "the guest says where it is; the first step stops the worker",
            inputSchema: { type: "object", properties: { at: { type: "string" } }, required: ["at"] },
            execute: async ({ at }: { at: string }) => {
              calls.push(at);
              if (at === "start") worker.child.kill("SIGTERM");
              return `${at} seen`;
            },
          },
        },
      },
    );
    try {
      // Longer than the CLI's usual 3 s grace after a signal: the worker asks for --drain plus a margin.
      const result = await sandbox.execute(
        "await tools.step({ at: 'start' }); await new Promise((r) => setTimeout(r, 3500)); await tools.step({ at: 'end' })",
      );
      expect({ success: result.success, result: result.result, error: result.error }).toEqual({
        success: true,
        result: "end seen",
        error: undefined,
      });
    } finally {
      await sandbox.destroy();
    }
    expect(calls).toEqual(["start", "end"]);
    expect(await worker.exited).toBe(0);
    expect(worker.stderr().split("\n").slice(1)).toEqual([
      "suaveplan-sandbox worker: SIGTERM: taking no new jobs; 1 running, given 8000 ms to finish before they go back to the queue",
      "suaveplan-sandbox worker: stopped",
      "",
    ]);
    expect(await groupLeft(pgid)).toBe(false);
  }, 60_000);

  it("SIGINT closes the same way and exits 130, as an interrupted run does", async () => {
    const worker = await startWorker([
      "--redis",
      redis.url,
      "--queue",
      "interrupt",
      "--engine",
      "vm",
      ...FAST,
    ]);
    worker.child.kill("SIGINT");
    expect(await worker.exited).toBe(130);
    expect(worker.stderr().split("\n").slice(1)).toEqual([
      "suaveplan-sandbox worker: SIGINT: taking no new jobs; none running",
      "suaveplan-sandbox worker: stopped",
      "",
    ]);
  });

  it("refuses a bad command line, an engine it cannot run and an unreachable Redis, each with its message", async () => {
    const url = redis.url;
    const hidden = { NODE_OPTIONS: `--require ${join(fixtures, "hide-isolated-vm.cjs")}` };
    const runs = await Promise.all([
      cli(["worker"]),
      cli(["worker", "--redis", url, "--lock-duration", "30"]),
      cli(["worker", "--redis", url, "--drain", "5 parsecs"]),
      cli(["worker", "--redis", url, "--engine", "vm", "--engine", "worker,docker"]),
      cli(["worker", "--redis", url, "--engine", "vm,isolate"], hidden),
      cli(["worker", "--redis", "http://127.0.0.1:6379", "--engine", "vm"]),
      cli(["worker", "--engine", "vm", "--queue", "no spaces"], { SUAVEPLAN_REDIS_URL: url }),
      cli(["worker", "--redis", `unix://${redis.socket}.gone`, "--engine", "vm", "--start-timeout", "300ms"]),
    ]);
    const codeTag = (code: string) => `(${code}); see @suaveplan/sandbox-core/docs/errors/${code}.md`;
    const help = "(run with --help for usage)\n";
    const major =
      Number.parseInt(process.versions.node, 10) < 22
        ? 5
        : Number.parseInt(process.versions.node, 10) < 24
          ? 6
          : 7;
    expect(runs.map(({ code, stderr }) => ({ code, stderr }))).toEqual([
      { code: 2, stderr: `error: required option '--redis <url>' not specified\n${help}` },
      {
        code: 2,
        stderr: `error: option '--lock-duration <duration>' argument '30' is invalid. It needs a unit, e.g. 30ms or 30s (a bare number is refused: earlier releases read it in different units).\n${help}`,
      },
      {
        code: 2,
        stderr: expect.stringMatching(
          /^error: option '--drain <duration>' argument '5 parsecs' is invalid\./,
        ),
      },
      {
        code: 2,
        stderr:
          'error: --engine: unknown engine "docker"; a worker runs vm, worker, spawn, isolate, quickjs (repeat --engine or give a comma list)\n',
      },
      {
        code: 2,
        stderr: [
          `error: --engine isolate: the package isolated-vm is not installed; install it with \`npm i -g isolated-vm@${major}\` (the CLI installed globally; \`npm i isolated-vm@${major}\` in a project; the newest major for Node ${Number.parseInt(process.versions.node, 10)}, a native addon)`,
          "Start the worker with engines this host can run (--engine vm|worker|spawn|isolate|quickjs), or fix the host.",
          "",
        ].join("\n"),
      },
      {
        code: 2,
        stderr: `error: --redis: the scheme "http:" is not Redis; use redis:, rediss: or unix: ${codeTag("SANDBOX_INVALID_CONFIG")}\n`,
      },
      {
        code: 2,
        stderr: `error: --queue: must be 1-48 letters, digits, '_' or '-' (got "no spaces") ${codeTag("SANDBOX_INVALID_CONFIG")}\n`,
      },
      {
        code: 1,
        stderr: `error: Redis at unix://${redis.socket}.gone did not answer within 300 ms (--start-timeout; last: connect ENOENT ${redis.socket}.gone): check that it runs there and that this host can reach it ${codeTag("SANDBOX_ENGINE_UNAVAILABLE")}\n`,
      },
    ]);
  }, 60_000);
});

describe("suaveplan-sandbox worker --help", () => {
  it("is listed among the commands and describes its flags and exit codes", async () => {
    const [top, own] = await Promise.all([cli(["--help"]), cli(["worker", "--help"])]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^ {2}worker \[options\] +Take sandbox executions from a Redis queue/m);
    expect(own.code).toBe(0);
    expect(own.stdout.match(/^ {2}--[a-z-]+/gm)).toEqual([
      "  --redis",
      "  --queue",
      "  --prefix",
      "  --tools",
      "  --engine",
      "  --concurrency",
      "  --lock-duration",
      "  --stalled-interval",
      "  --lease",
      "  --drain",
      "  --transport",
      "  --start-timeout",
    ]);
    expect(own.stdout).toContain("Exit codes: 0 stopped by SIGTERM, 130 by SIGINT");
  });
});
