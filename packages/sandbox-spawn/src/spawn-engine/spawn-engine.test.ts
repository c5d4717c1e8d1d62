import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { sanitiseEnv } from "@suaveplan/sandbox-core/env";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";
import { buildExecutionRequest, createHostCodec, ModuleRegistry } from "@suaveplan/sandbox-guest";
import { afterEach, describe, expect, it } from "vitest";
import { FakeChild } from "../../test/support/fake-child.js";
import { HOST_READS_CHILD_MEMORY, readResidentBytes } from "../internal/child-memory.js";
import { buildChildArgs, NO_WARM_UP_FLAG, permissionFlag } from "../internal/node-args.js";
import type { ProcessSpawner } from "../internal/spawn-options.js";
import { SPAWN_CAPABILITIES, SpawnEngine } from "./spawn-engine.js";

const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../test/fixtures/${name}`, import.meta.url));

/** The real spawn, recording every child it starts. */
function recordingSpawner(): { spawner: ProcessSpawner; children: ChildProcess[] } {
  const children: ChildProcess[] = [];
  const spawner: ProcessSpawner = (command, args, options) => {
    const child = spawn(command, args, options);
    children.push(child);
    return child;
  };
  return { spawner, children };
}

/** A result without its measurements (`duration`, `memoryUsed`), for whole-value assertions. */
function settled(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

/** Run the built runner directly (the engine's own flags) with `stdin` and collect its fd-3 frames. */
async function runnerFrames(
  runnerPath: string,
  stdin: string,
): Promise<{ code: unknown; frames: unknown[] }> {
  const child = spawn(process.execPath, buildChildArgs(runnerPath, 64 * 1024 * 1024), {
    stdio: ["pipe", "ignore", "pipe", "pipe"],
    env: {},
  });
  const chunks: Buffer[] = [];
  (child.stdio[3] as Readable).on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr?.resume();
  child.stdin?.end(stdin);
  const [code] = await once(child, "close");
  const frames = Buffer.concat(chunks)
    .toString("utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as unknown);
  return { code, frames };
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) await once(child, "exit");
}

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const engines: SpawnEngine[] = [];
function engine(options: ConstructorParameters<typeof SpawnEngine>[0] = {}): SpawnEngine {
  const created = new SpawnEngine(options);
  engines.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.destroy()));
});

describe("sanitiseEnv", () => {
  it("strips sensitive env keys", () => {
    expect(
      sanitiseEnv({
        PATH: "/usr/bin",
        LANG: "C.UTF-8",
        SECRET_X: "s",
        api_key: "k",
        GITHUB_TOKEN: "t",
        DB_PassWord: "p",
        AWS_CREDENTIALS: "c",
        OAUTH_CLIENT: "a",
        HOME: "/root",
        user: "root",
        SHELL: "/bin/sh",
        LOGNAME: "root",
        EMPTY: "",
        UNSET: undefined,
      }),
    ).toEqual({ PATH: "/usr/bin", LANG: "C.UTF-8", EMPTY: "" });

    const previous = process.env.SECRET_X;
    process.env.SECRET_X = "hunter2";
    try {
      const env = engine({ preStart: false }).getSanitisedEnv();
      for (const key of ["SECRET_X", "HOME", "USER", "SHELL", "LOGNAME"]) expect(env).not.toHaveProperty(key);
      expect(Object.values(env)).not.toContain("hunter2");
    } finally {
      if (previous === undefined) delete process.env.SECRET_X;
      else process.env.SECRET_X = previous;
    }
  });

  it("gives the real child exactly the sanitised env (no NODE_*) and the permission-model flags", async () => {
    const probe = engine({
      runnerPath: fixture("env-probe-runner.mjs"),
      env: {
        PATH: "/usr/bin",
        LANG: "C",
        API_TOKEN: "t",
        HOME: "/root",
        NODE_OPTIONS: "--require=/tmp/evil.js",
      },
      memoryLimit: 32 * 1024 * 1024,
      preStart: false,
    });
    expect(probe.getSanitisedEnv()).toEqual({ PATH: "/usr/bin", LANG: "C" });
    const result = await probe.execute("ignored");
    expect(result.result).toStrictEqual({
      env: { PATH: "/usr/bin", LANG: "C" },
      execArgv: buildChildArgs(probe.getRunnerPath(), 32 * 1024 * 1024).slice(0, -1),
    });
    expect(buildChildArgs("/r.js", 32 * 1024 * 1024)).toEqual([
      permissionFlag(),
      "--allow-fs-read=/r.js",
      "--no-addons",
      "--disallow-code-generation-from-strings",
      "--frozen-intrinsics",
      "--experimental-vm-modules",
      "--disable-warning=ExperimentalWarning",
      `--trace-event-file-pattern=${process.platform === "win32" ? "NUL" : "/dev/null"}`,
      "--max-old-space-size=32",
      "/r.js",
    ]);
  });
});

describe("SpawnEngine", () => {
  it("kills child on timeout", async () => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner, preStart: false });
    const result = await spawnEngine.execute("while(true){}", {}, { timeout: 200 });
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.TIMEOUT,
      error:
        "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      logs: [],
    });
    expect(children).toHaveLength(1);
    const child = children[0] as ChildProcess;
    await exited(child);
    expect({ exitCode: child.exitCode, signalCode: child.signalCode }).toEqual({
      exitCode: null,
      signalCode: "SIGKILL",
    });
    const after = await spawnEngine.execute("1 + 1");
    expect(settled(after)).toStrictEqual({ success: true, result: 2, logs: [] });
  });

  it("end-to-end runner pipeline returns 1+1", async () => {
    const runnerPath = engine({ preStart: false }).getRunnerPath();
    const built = buildExecutionRequest(
      "1 + 1",
      undefined,
      undefined,
      parseEngineLimits(),
      new ModuleRegistry(),
    );
    if (!built.ok) throw new Error(built.result.error);
    expect(await runnerFrames(runnerPath, `${JSON.stringify(built.request)}\n`)).toStrictEqual({
      code: 0,
      frames: [
        { type: "start" },
        {
          type: "done",
          outcome: { kind: "value", text: "2" },
          memoryUsed: expect.any(Number),
          cpuMs: expect.any(Number),
          toolCalls: 0,
          toolBytes: 0,
          peakBytes: expect.any(Number),
        },
      ],
    });
  });

  it("the runner's done frame reports how far its memory peaked during the run, also when it was freed by the end", async () => {
    const runnerPath = engine({ preStart: false }).getRunnerPath();
    const peakOf = async (code: string): Promise<number> => {
      const built = buildExecutionRequest(
        code,
        undefined,
        undefined,
        parseEngineLimits(),
        new ModuleRegistry(),
      );
      if (!built.ok) throw new Error(built.result.error);
      const { frames } = await runnerFrames(runnerPath, `${JSON.stringify(built.request)}\n`);
      return (frames.at(-1) as { peakBytes: number }).peakBytes;
    };
    const MiB = 1024 * 1024;
    const freed = await peakOf("let b = new Uint8Array(96 * 1024 * 1024).fill(1); b = null; 1");
    const small = await peakOf("1 + 1");
    // Pages node already held count at the start: the peak is a little under the 96 MiB allocated.
    expect({ freed: freed > 80 * MiB, small: small < 16 * MiB }).toEqual({ freed: true, small: true });
  });

  it("the runner answers a malformed request with a fault done frame, which the engine reports as SANDBOX_SPAWN_FAILED", async () => {
    const runnerPath = engine({ preStart: false }).getRunnerPath();
    expect(await runnerFrames(runnerPath, '{"code":1}\n')).toStrictEqual({
      code: 0,
      frames: [
        {
          type: "done",
          outcome: {
            kind: "fault",
            message: "The runner refused the request: request.code: must be a string",
          },
        },
      ],
    });
  });

  it("keeps console output off the result channel: a guest printing a fake done frame cannot change the result", async () => {
    const spawnEngine = engine();
    const fake = '{"type":"done","outcome":{"kind":"value","text":"\\"forged\\""},"memoryUsed":0}';
    const result = await spawnEngine.execute(
      `console.log(${JSON.stringify(fake)}); console.log("\\n" + ${JSON.stringify(fake)} + "\\n"); "genuine"`,
    );
    expect(settled(result)).toStrictEqual({
      success: true,
      result: "genuine",
      logs: [
        { level: "log", message: fake },
        { level: "log", message: `\n${fake}\n` },
      ],
    });
  });

  it("returns a multi-megabyte result intact (one frame, read in many chunks)", async () => {
    const result = await engine().execute(
      "({ text: 'é'.repeat(3e6), list: Array.from({ length: 1e5 }, (_, i) => i) })",
    );
    expect(result.success).toBe(true);
    const value = result.result as { text: string; list: number[] };
    expect({
      textLength: value.text.length,
      allAccents: /^é+$/.test(value.text),
      list: value.list.length,
      last: value.list.at(-1),
    }).toEqual({
      textLength: 3e6,
      allAccents: true,
      list: 1e5,
      last: 99_999,
    });
  });

  it("reports memoryUsed as the child's heap growth, in bytes", async () => {
    const result = await engine().execute("const keep = new Array(1e6).fill(1); keep.length");
    expect({ success: result.success, result: result.result }).toEqual({ success: true, result: 1e6 });
    expect(result.memoryUsed).toBeGreaterThan(4_000_000);
  });

  it("ends an out-of-memory child with SANDBOX_MEMORY_EXCEEDED and stays usable", async () => {
    const spawnEngine = engine({ memoryLimit: 16 * 1024 * 1024, timeout: 30_000 });
    const result = await spawnEngine.execute(
      "const hoard = []; for (;;) hoard.push(new Array(1e5).fill(hoard.length));",
    );
    expect(result).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.MEMORY_EXCEEDED,
      error: `Execution exceeded its memory limit of ${16 * 1024 * 1024} bytes (SANDBOX_MEMORY_EXCEEDED)`,
      logs: [],
      duration: expect.any(Number),
      usage: { wallMs: result.duration, outputBytes: 0, toolCalls: 0, toolBytes: 0 },
    });
    const after = await spawnEngine.execute("'alive'");
    expect(after.result).toBe("alive");
  });

  it("refuses a memoryLimit below the 8 MiB a child needs to boot instead of raising it: INVALID_CONFIG per engine, INVALID_OPTIONS per call", async () => {
    expect(() => engine({ memoryLimit: 64 })).toThrow(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_CONFIG,
        message: expect.stringContaining(
          'memoryLimit: 64 bytes is below the spawn engine\'s minimum of 8 MiB (8388608 bytes); did you mean "64MiB"?',
        ),
      }),
    );
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner, preStart: false });
    const refused = await spawnEngine.execute("1", {}, { memoryLimit: 4 * 1024 * 1024 });
    expect(settled(refused)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.INVALID_OPTIONS,
      error:
        'options.memoryLimit: 4 MiB is below the spawn engine\'s minimum of 8 MiB (8388608 bytes); give at least "8MiB" (SANDBOX_INVALID_OPTIONS)',
      logs: [],
    });
    expect(children).toEqual([]);
  });

  it("reports a missing Node binary as SANDBOX_SPAWN_FAILED", async () => {
    const result = await engine({ execPath: "/nonexistent/node", preStart: false }).execute("1");
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.SPAWN_FAILED,
      error:
        "Could not run the child process /nonexistent/node: spawn /nonexistent/node ENOENT. Check execPath and runnerPath (SANDBOX_SPAWN_FAILED)",
      logs: [],
    });
  });

  it("reports a spawner that throws as SANDBOX_SPAWN_FAILED", async () => {
    const result = await engine({
      preStart: false,
      spawner: () => {
        throw new Error("EAGAIN: too many processes");
      },
    }).execute("1");
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.SPAWN_FAILED,
      error: `Could not start the child process ${process.execPath}: EAGAIN: too many processes. Check execPath and the spawner (SANDBOX_SPAWN_FAILED)`,
      logs: [],
    });
  });

  it("reports a child that dies without a result as SANDBOX_SPAWN_FAILED, quoting its stderr", async () => {
    const result = await engine({ runnerPath: fixture("crash-runner.mjs"), preStart: false }).execute("1");
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.SPAWN_FAILED,
      error:
        "The child process exited with code 3 before sending a result. Child stderr: crash-runner: deliberate failure (SANDBOX_SPAWN_FAILED)",
      logs: [],
    });
  });

  it.skipIf(process.platform !== "linux" || !existsSync("/usr/bin/prlimit"))(
    "starts each child under a CPU-time limit made for the engine's timeout, told to its runner",
    async () => {
      const { spawner, children } = recordingSpawner();
      const spawnEngine = engine({ spawner, timeout: 2_000 });
      await until(() => children.length === 1);
      const [spare] = children as [ChildProcess];
      await until(() => readFileSync(`/proc/${spare.pid}/cmdline`, "utf8").startsWith(process.execPath));
      const limits = readFileSync(`/proc/${spare.pid}/limits`, "utf8");
      const argv = readFileSync(`/proc/${spare.pid}/cmdline`, "utf8").split("\0");
      expect({
        limit: /^Max cpu time\s+(\S+)\s+(\S+)\s+seconds/m.exec(limits)?.slice(1),
        // The binding is random per child: its shape here, its use in runner-build.test.ts.
        runnerArgs: argv
          .slice(argv.indexOf(spawnEngine.getRunnerPath()) + 1, -1)
          .map((arg) => arg.replace(/_[0-9a-f]{16}$/, "_<16 hex digits>")),
      }).toEqual({
        limit: ["11", "11"],
        // An idle engine's spare warms up: no --suaveplan-no-warm-up.
        runnerArgs: [
          "--suaveplan-cpu-limit=11",
          "--suaveplan-kernel-binding=__suaveplan_kernel_<16 hex digits>",
        ],
      });
      expect(settled(await spawnEngine.execute("setTimeout(() => {}, 0); 1 + 1"))).toStrictEqual({
        success: true,
        result: 2,
        logs: [],
      });
    },
  );

  it("skips the warm-up run in a child a caller waits for and in spares booted while several runs are in flight", async () => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner });
    await until(() => children.length === 1); // the idle engine's first spare
    // Three callers at once: one takes the spare, two wait for children of their own. The first
    // run ends early, and the spare booted then is booted while the other two are still running.
    const runs = [100, 1_500, 1_500].map((ms) =>
      spawnEngine.execute(`await new Promise((done) => setTimeout(done, ${ms})); ${ms}`),
    );
    await until(() => children.length === 4);
    const warmsUp = children.map((child) => !child.spawnargs.includes(NO_WARM_UP_FLAG));
    expect((await Promise.all(runs)).map((result) => settled(result).result)).toEqual([100, 1_500, 1_500]);
    expect(warmsUp).toEqual([true, false, false, false]);
  });

  it("reports a runner that breaks the protocol as SANDBOX_SPAWN_FAILED and kills it", async () => {
    const { spawner, children } = recordingSpawner();
    const result = await engine({
      runnerPath: fixture("forging-runner.mjs"),
      spawner,
      preStart: false,
    }).execute("1");
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.SPAWN_FAILED,
      error:
        "The child process broke the protocol (the runner wrote a line that is not JSON); it was killed (SANDBOX_SPAWN_FAILED)",
      logs: [],
    });
    await exited(children[0] as ChildProcess);
    expect(children[0]?.signalCode).toBe("SIGKILL");
  });

  it("reports a child that never starts the code within startTimeout as SANDBOX_SPAWN_FAILED (fake child)", async () => {
    const fake = new FakeChild();
    const result = await engine({ spawner: () => fake, preStart: false, startTimeout: 50 }).execute("1");
    expect(settled(result)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.SPAWN_FAILED,
      error:
        "The child process did not start the code within 50 ms (startTimeout); the machine may be overloaded (SANDBOX_SPAWN_FAILED)",
      logs: [],
    });
    expect(fake.kills).toEqual(["SIGKILL"]);
    await fake.exit(null, "SIGKILL");
  });

  it("keeps one pre-started child ready and starts the next one after each use", async () => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner });
    await until(() => children.length === 1);
    const first = await spawnEngine.execute("globalThis.seen = 1; 'first'");
    expect(first.result).toBe("first");
    expect(children.length).toBe(1); // ran in the pre-started child: nothing spawned on the call path
    await until(() => children.length === 2);
    const second = await spawnEngine.execute("typeof seen");
    expect(second.result).toBe("undefined");
    expect(children.length).toBe(2);
    expect(children[0]?.pid).not.toBe(children[1]?.pid);
    // A per-call memoryLimit the spare was not started with gets a fresh child.
    await until(() => children.length === 3);
    const bigger = await spawnEngine.execute("'bigger'", {}, { memoryLimit: 256 * 1024 * 1024 });
    expect(bigger.result).toBe("bigger");
    expect(children.length).toBe(4);
    expect(children[3]?.spawnargs).toContain("--max-old-space-size=256");
  });

  it("after a burst of three runs keeps three pre-started children, spawned one after another", async () => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner, maxSpares: 4 });
    await until(() => children.length === 1);
    const burst = await Promise.all(["'a'", "'b'", "'c'"].map((code) => spawnEngine.execute(code)));
    expect(burst.map((r) => r.result)).toEqual(["a", "b", "c"]);
    // One spare and two cold children served the burst; three spares follow it, and no more.
    await until(() => children.length === 6);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(children.length).toBe(6);
    const spares = children.slice(3);
    expect(spares.map((child) => child.exitCode)).toEqual([null, null, null]);
    // The next burst of three runs in them: each ran one request and exited on its own.
    const again = await Promise.all(["1", "2", "3"].map((code) => spawnEngine.execute(code)));
    expect(again.map((r) => r.result)).toEqual([1, 2, 3]);
    await until(() => spares.every((child) => child.exitCode !== null || child.signalCode !== null));
    expect(spares.map((child) => [child.exitCode, child.signalCode])).toEqual([
      [0, null],
      [0, null],
      [0, null],
    ]);
  });

  it.each([
    [{ maxSpares: 0 }, 0],
    [{ preStart: false, maxSpares: 3 }, 0],
  ])("keeps no pre-started child with %j", async (options, spares) => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner, ...options });
    expect((await spawnEngine.execute("'ran'")).result).toBe("ran");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(children.length - 1).toBe(spares);
  });

  it.each([
    [-1, "-1"],
    [0.5, "0.5"],
    [100, "100"],
  ])("refuses maxSpares %j, naming the field and the reason", (maxSpares, shown) => {
    expect(() => new SpawnEngine({ maxSpares })).toThrow(
      `Invalid SpawnEngine option maxSpares: expected an integer from 0 to 64 (got ${shown})`,
    );
  });

  it("destroy() kills the spare and running children, waits for them, and is idempotent", async () => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner });
    await until(() => children.length === 1);
    const running = spawnEngine.execute("new Promise(() => {})", {}, { timeout: 60_000 }); // takes the spare
    expect((await spawnEngine.execute("'quick'")).result).toBe("quick"); // a cold child of its own
    await until(() => children.length === 3); // the next spare, started after that use
    await Promise.all([spawnEngine.destroy(), spawnEngine.destroy()]);
    // Destroy waited: the running child and the spare were killed; the quick one had already ended.
    expect(children.map((child) => child.exitCode !== null || child.signalCode !== null)).toEqual([
      true,
      true,
      true,
    ]);
    expect([children[0]?.signalCode, children[2]?.signalCode]).toEqual(["SIGKILL", "SIGKILL"]);
    expect(settled(await running)).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      error: "SpawnEngine was destroyed while the code ran (SANDBOX_ENGINE_DISPOSED)",
      logs: [],
    });
    expect(await spawnEngine.execute("1")).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.ENGINE_DISPOSED,
      error: "SpawnEngine was destroyed; create a new SpawnEngine to run code (SANDBOX_ENGINE_DISPOSED)",
      logs: [],
      duration: 0,
    });
    expect(children).toHaveLength(3);
  });

  it.skipIf(process.platform !== "linux")(
    "destroy() ends even when a process that left the child's tree still holds its pipes",
    async () => {
      // The shape of a confined child whose bwrap init escaped the kill: a process reparented to
      // init keeps the child's stdout and fd 3 open, so the child never 'close's by itself.
      const pidFile = join(mkdtempSync(join(tmpdir(), "suaveplan-orphan-")), "pid");
      const { spawner: real, children } = recordingSpawner();
      const spawner: ProcessSpawner = (command, args, options) =>
        real(
          "/bin/sh",
          ["-c", `(/bin/sleep 600 & echo $! > "${pidFile}"); exec "$@"`, "sh", command, ...args],
          options,
        );
      const spawnEngine = new SpawnEngine({ spawner, preStart: false });
      expect((await spawnEngine.execute("'done'")).result).toBe("done");
      const orphan = Number(readFileSync(pidFile, "utf8"));
      try {
        await exited(children[0] as ChildProcess);
        const destroyed = await Promise.race([
          spawnEngine.destroy().then(() => "destroyed"),
          new Promise((resolve) => setTimeout(resolve, 15_000, "still waiting")),
        ]);
        const streams = (children[0] as ChildProcess).stdio.map((stream) => stream?.destroyed ?? null);
        expect({ destroyed, streams }).toEqual({
          destroyed: "destroyed",
          streams: [true, null, true, true],
        });
      } finally {
        process.kill(orphan, "SIGKILL");
        rmSync(dirname(pidFile), { recursive: true, force: true });
      }
    },
    20_000,
  );

  it("supports await using", async () => {
    const { spawner, children } = recordingSpawner();
    {
      await using scoped = new SpawnEngine({ spawner });
      expect((await scoped.execute("6 * 7")).result).toBe(42);
    }
    for (const child of children) expect(child.exitCode !== null || child.signalCode !== null).toBe(true);
  });

  it("copies context and module exports in through the codec: BigInt, Date, Map, undefined and cycles cross", async () => {
    const spawnEngine = engine({ preStart: false });
    const cyclic: Record<string, unknown> = { n: 1 };
    cyclic.self = cyclic;
    spawnEngine.registerModule({ name: "table", exports: new Map([["k", new Date(2)]]) });
    const result = await spawnEngine.execute(
      "[typeof big, big + 1n, cyclic.self === cyclic, nothing === undefined, 'nothing' in globalThis, table.get('k').getTime()]",
      { big: 1n, cyclic, nothing: undefined },
    );
    expect(settled(result)).toStrictEqual({
      success: true,
      result: ["bigint", 2n, true, true, true, 2],
      logs: [],
    });
  });

  it("resolves malformed arguments as SANDBOX_INVALID_OPTIONS without starting a child; throws for bad config and modules", async () => {
    const { spawner, children } = recordingSpawner();
    const spawnEngine = engine({ spawner, preStart: false });
    const results = await Promise.all([
      spawnEngine.execute("1", {}, { timeout: -1 }),
      spawnEngine.execute("1", [] as unknown as Record<string, unknown>),
      spawnEngine.execute("1", { fn: () => 1 }),
      spawnEngine.execute(42 as unknown as string),
    ]);
    expect(results.map(settled)).toStrictEqual([
      {
        success: false,
        errorCode: SANDBOX_CODES.INVALID_OPTIONS,
        error:
          "Invalid execution options: options.timeout: Too small: expected number to be >0 (got -1) (SANDBOX_INVALID_OPTIONS)",
        logs: [],
      },
      {
        success: false,
        errorCode: SANDBOX_CODES.INVALID_OPTIONS,
        error: "context: must be a plain object of values to copy in as globals (SANDBOX_INVALID_OPTIONS)",
        logs: [],
      },
      {
        success: false,
        errorCode: SANDBOX_CODES.INVALID_OPTIONS,
        error:
          "context.fn: a function cannot be copied into the sandbox; pass plain data (SANDBOX_INVALID_OPTIONS)",
        logs: [],
      },
      {
        success: false,
        errorCode: SANDBOX_CODES.INVALID_OPTIONS,
        error: "code: must be a string (got number) (SANDBOX_INVALID_OPTIONS)",
        logs: [],
      },
    ]);
    expect(children).toHaveLength(0);
    expect(() => spawnEngine.registerModule({ name: "f", exports: { run: () => 1 } })).toThrow(
      new SandboxError(
        SANDBOX_CODES.INVALID_MODULE,
        "module f: exports.run is a function; module exports must be plain data",
      ),
    );
    expect(() => spawnEngine.registerModule({ name: "g", source: "module.exports = (" })).toThrow(
      new SandboxError(
        SANDBOX_CODES.INVALID_MODULE,
        "module g: does not compile: SyntaxError: Unexpected token '}'",
      ),
    );
    expect(() => new SpawnEngine({ timeout: 0 })).toThrow(SandboxError);
    expect(() => new SpawnEngine({ preStart: false, colour: "red" } as never)).toThrow(
      "Invalid SpawnEngine option colour: is not a SpawnEngine option (SANDBOX_INVALID_CONFIG)",
    );
    expect(() => new SpawnEngine({ runnerPath: "/nonexistent/runner.js" })).toThrow(
      "Invalid SpawnEngine option runnerPath: does not exist (/nonexistent/runner.js) (SANDBOX_INVALID_CONFIG)",
    );
  });

  it("keeps running when onLog throws, and delivers every line to it and to the result", async () => {
    const seen: LogEntry[] = [];
    const result = await engine().execute(
      "console.log('a'); console.warn({ b: [1] }); 'done'",
      {},
      {
        onLog: (entry) => {
          seen.push(entry);
          throw new Error("host callback failed");
        },
      },
    );
    const logs = [
      { level: "log", message: "a" },
      { level: "warn", message: "{ b: [ 1 ] }" },
    ];
    expect(settled(result)).toStrictEqual({ success: true, result: "done", logs });
    expect(seen).toStrictEqual(logs);
  });

  it("declares its capabilities: memory enforced, async work bounded, streamed logs, aborts running code, CPU by realm entries", () => {
    expect(engine({ preStart: false }).capabilities).toBe(SPAWN_CAPABILITIES);
    expect(SPAWN_CAPABILITIES).toStrictEqual({
      securityBoundary: false,
      tier: "child process under the Node permission model (reads only the runner file; no writes, child processes, workers or addons; network not restricted) — a security boundary only when also confined by the OS (e.g. dsh-sandbox-local)",
      enforcesMemoryLimit: true,
      boundsAsyncWork: true,
      streamsLogs: true,
      abortsRunningCode: true,
      measuresCpu: "entries",
      memoryAccounting: {
        kinds: {
          heap: "allocation",
          strings: "allocation",
          // Everything else the child allocates, through its resident memory, where the host can read it.
          arrayBuffers: HOST_READS_CHILD_MEMORY ? "sampled" : false,
          sharedArrayBuffers: HOST_READS_CHILD_MEMORY ? "sampled" : false,
          wasmMemory: HOST_READS_CHILD_MEMORY ? "sampled" : false,
        },
        ...(HOST_READS_CHILD_MEMORY ? { sampleIntervalMs: 10, allowanceBytes: 32 * 1024 * 1024 } : {}),
        exactness: SPAWN_CAPABILITIES.memoryAccounting?.exactness,
      },
    });
    expect(Object.isFrozen(SPAWN_CAPABILITIES)).toBe(true);
    // Detected from this process's own /proc entry, not assumed from the platform name.
    expect(HOST_READS_CHILD_MEMORY).toBe(
      process.platform === "linux" && readResidentBytes(process.pid) !== undefined,
    );
  });
});

describe("SpawnEngine usage", () => {
  const codec = createHostCodec();
  const crossed = (input: unknown, output: unknown): number =>
    (codec.encode(input, "input", 1024).length + codec.encode(output, "output", 1024).length) * 2;
  const echo = { names: ["echo"], call: async (_name: string, input: unknown) => input };

  it("reports the child's CPU time, heap growth, output bytes and tool traffic from its done frame", async () => {
    const result = await engine().execute(
      "let n = 0; for (let i = 0; i < 1e5; i++) n += i; console.log('né'); await tools.echo('ab'); await tools.echo([1, 2]); n",
      {},
      { hostCalls: echo },
    );
    expect(result).toStrictEqual({
      success: true,
      result: 4_999_950_000,
      logs: [{ level: "log", message: "né" }],
      duration: expect.any(Number),
      memoryUsed: expect.any(Number),
      usage: {
        wallMs: result.duration,
        cpuMs: expect.any(Number),
        heapBytes: result.memoryUsed,
        outputBytes: 3,
        toolCalls: 2,
        toolBytes: crossed("ab", "ab") + crossed([1, 2], [1, 2]),
      },
    });
    expect(result.usage?.cpuMs).toBeGreaterThan(0);
    expect(result.usage?.cpuMs).toBeLessThanOrEqual(result.duration);
  });

  it("a run the host ended (timeout) reports the tool traffic the host saw, and no CPU or heap figures", async () => {
    const result = await engine().execute(
      "await tools.echo('ab'); console.log('looping'); while (true) {}",
      {},
      // Long enough for the tool's round trip and the log to land first on a loaded machine.
      { hostCalls: echo, timeout: 1_500 },
    );
    expect(result).toStrictEqual({
      success: false,
      errorCode: SANDBOX_CODES.TIMEOUT,
      error:
        "Execution timed out after 1500 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      logs: [{ level: "log", message: "looping" }],
      duration: expect.any(Number),
      usage: {
        wallMs: result.duration,
        outputBytes: 7,
        toolCalls: 1,
        toolBytes: crossed("ab", "ab"),
      },
    });
  });
});
