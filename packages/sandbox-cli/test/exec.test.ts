// `suaveplan-sandbox exec` end to end: the built CLI, real bwrap / Landlock,
// real signals and pipes.
import { type ChildProcess, spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeEach, describe, expect, it } from "vitest";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js");
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-cli-exec-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let workspace: string;
let n = 0;
beforeEach(() => {
  workspace = join(scratch, `ws-${n++}`);
  mkdirSync(workspace);
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI's probe cache goes to the scratch directory, never the user's home. */
const testEnv: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: join(scratch, "cache") };

function start(args: string[], env: NodeJS.ProcessEnv = testEnv): ChildProcess {
  return spawn(process.execPath, [bin, ...args], { cwd: workspace, env, stdio: ["ignore", "pipe", "pipe"] });
}

function finish(child: ChildProcess): Promise<Run> {
  return new Promise((resolve) => {
    const run: Run = { code: null, signal: null, stdout: "", stderr: "" };
    child.stdout?.on("data", (d: Buffer) => {
      run.stdout += d.toString();
    });
    child.stderr?.on("data", (d: Buffer) => {
      run.stderr += d.toString();
    });
    child.once("close", (code, signal) => resolve({ ...run, code, signal }));
  });
}

const exec = (args: string[], env?: NodeJS.ProcessEnv): Promise<Run> => finish(start(["exec", ...args], env));

/** Processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  return readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid))
    .flatMap((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
        return cmdline.includes(marker) ? [cmdline] : [];
      } catch {
        return [];
      }
    });
}

const marker = (): string => (Math.random() * 1000 + 700).toFixed(4);

describe("exec exit codes", () => {
  it("passes the command's own codes through (2 stays 2, 127 not found, 128+N on a signal)", async () => {
    const runs = await Promise.all([
      exec(["--mode", "read-only", "--", "sh", "-c", "exit 2"]),
      exec(["--mode", "read-only", "--", "no-such-command-suaveplan"]),
      exec(["--mode", "read-only", "--", "sh", "-c", "kill -KILL $$"]),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 127, 137]);
  });

  it("uses 125 for its own usage errors, naming the flag", async () => {
    const runs = await Promise.all([
      exec(["--", "true"]),
      exec(["--mode", "read-only", "--timeout", "soon", "--", "true"]),
      exec(["--mode", "read-only", "--env", "1BAD=x", "--", "true"]),
      exec(["--mode", "workspace-write", "--allow-write", join(scratch, "missing"), "--", "true"]),
    ]);
    expect(runs.map((r) => r.code)).toEqual([125, 125, 125, 125]);
    expect(runs.map((r) => /--mode|--timeout|--env|--allow-write/.exec(r.stderr)?.[0])).toEqual([
      "--mode",
      "--timeout",
      "--env",
      "--allow-write",
    ]);
  });

  it("uses 126 when no backend can confine the command (here: denyRead with only plain Landlock on PATH)", async () => {
    writeFileSync(join(workspace, "secret"), "x");
    const run = await exec(["--mode", "read-only", "--deny-read", join(workspace, "secret"), "--", "true"], {
      ...testEnv,
      PATH: "/nonexistent",
    });
    expect({ code: run.code, unavailable: run.stderr.includes("SANDBOX_UNAVAILABLE") }).toEqual({
      code: 126,
      unavailable: true,
    });
  });
});

describe("exec --timeout", () => {
  it("kills the confined tree, says so, and exits 124", async () => {
    const m = marker();
    const started = performance.now();
    const run = await exec([
      "--mode",
      "read-only",
      "--timeout",
      "300ms",
      "--",
      "sh",
      "-c",
      `sleep ${m} & sleep ${m}`,
    ]);
    expect({
      code: run.code,
      line: run.stderr
        .trim()
        .split("\n")
        .at(-1)
        ?.replace(/ \(.*\)$/, ""),
    }).toEqual({
      code: 124,
      line: "[timeout] killed after 300 ms",
    });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(processesWith(`sleep ${m}`)).toEqual([]);
  });
});

describe("exec environment, writes and reads", () => {
  it("passes HOME, USER, LANG, TERM and PATH through, sets --env, and never passes secrets unless named", async () => {
    const env = {
      ...testEnv,
      HOME: "/home/agent",
      USER: "agent",
      LANG: "C.UTF-8",
      TERM: "xterm-256color",
      API_TOKEN: "t0ken",
      KEEP_ME: "kept",
      GITHUB_TOKEN: "ghp",
    };
    const run = await exec(
      [
        "--mode",
        "read-only",
        "--env",
        "FOO=bar=baz",
        "--env",
        "GITHUB_TOKEN",
        "--env",
        "KEEP_ME",
        "--",
        "sh",
        "-c",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        'printf "%s|" "$HOME" "$USER" "$LANG" "$TERM" "${PATH:+set}" "$FOO" "$KEEP_ME" "$GITHUB_TOKEN" "${API_TOKEN:-unset}"',
      ],
      env,
    );
    expect(run.stdout).toBe("/home/agent|agent|C.UTF-8|xterm-256color|set|bar=baz|kept|ghp|unset|");
  });

  it("--allow-write adds a writable directory and --deny-read hides a file (refused, 126, in a writable root)", async () => {
    const cache = join(scratch, `cache-${n}`);
    const token = join(scratch, `token-${n}`);
    mkdirSync(cache);
    writeFileSync(token, "SECRET\n");
    writeFileSync(join(workspace, "token"), "SECRET\n");
    const run = await exec([
      "--mode",
      "workspace-write",
      "--allow-write",
      cache,
      "--deny-read",
      token,
      "--",
      "sh",
      "-c",
      `echo cached > ${cache}/c && cat ${token} || echo hidden`,
    ]);
    // A mask on a file in the workspace would not survive the file's replacement by rename.
    const inWorkspace = await exec(["--mode", "workspace-write", "--deny-read", "token", "--", "true"]);
    expect({
      code: run.code,
      stdout: run.stdout,
      cached: readFileSync(join(cache, "c"), "utf8"),
      refused: inWorkspace.code,
    }).toEqual({ code: 0, stdout: "hidden\n", cached: "cached\n", refused: 126 });
  });

  it("--settings supplies the same settings, relative to the file; flags add to them; a bad key is a usage error", async () => {
    mkdirSync(join(workspace, "cache"));
    writeFileSync(
      join(workspace, "settings.json"),
      JSON.stringify({
        mode: "workspace-write",
        allowWrite: ["cache"],
        env: ["FROM_SETTINGS=1"],
        timeout: "20s",
      }),
    );
    const run = await exec([
      "--settings",
      "settings.json",
      "--env",
      "FROM_FLAG=2",
      "--",
      "sh",
      "-c",
      'echo "$FROM_SETTINGS$FROM_FLAG" > cache/out && cat cache/out',
    ]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "12\n" });
    writeFileSync(join(workspace, "bad.json"), JSON.stringify({ mode: "read-only", allowWrtie: ["x"] }));
    const bad = await exec(["--settings", "bad.json", "--", "true"]);
    expect({ code: bad.code, named: bad.stderr.includes("allowWrtie") }).toEqual({ code: 125, named: true });
  });
});

describe("exec --allow-domain", () => {
  it("lets the allowed host through the filtering proxy (NODE_USE_ENV_PROXY=1 set for Node) and refuses the rest", async () => {
    const { createServer } = await import("node:http");
    const server = createServer((_req, res) => res.end("upstream\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      // NO_PROXY covers localhost; --noproxy '' sends even localhost through the proxy,
      // which resolves it (from /etc/hosts) to the server above.
      const run = await exec([
        "--mode",
        "read-only",
        "--allow-domain",
        "localhost",
        "--",
        "sh",
        "-c",
        `curl -sS --noproxy '' http://localhost:${port}/ && printenv NODE_USE_ENV_PROXY && curl -sS --noproxy '' --proxytunnel http://127.0.0.1:${port}/`,
      ]);
      expect({ code: run.code, stdout: run.stdout, last: run.stderr.trim().split("\n").at(-1) }).toEqual({
        code: 56,
        stdout: "upstream\n1\n",
        last: "[denied] exit 56 (read-only via bwrap, enforcement full): curl: (56) CONNECT tunnel failed, response 403",
      });
      const bad = await exec(["--mode", "read-only", "--allow-domain", "http://x", "--", "true"]);
      const both = await exec([
        "--mode",
        "read-only",
        "--network",
        "deny",
        "--allow-domain",
        "a.test",
        "--",
        "true",
      ]);
      expect([bad.code, both.code]).toEqual([125, 125]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("exec --network deny", () => {
  it("a connection the cut network refused is [denied: network], not a plain failure", async () => {
    const { createServer } = await import("node:net");
    const server = createServer((socket) => socket.end("reached\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const run = await exec([
        "--mode",
        "read-only",
        "--network",
        "deny",
        "--",
        "curl",
        "-sS",
        `http://127.0.0.1:${port}/`,
      ]);
      const last = run.stderr
        .trim()
        .split("\n")
        .at(-1)
        ?.replace(/after \d+ ms/, "after N ms");
      expect({ code: run.code, stdout: run.stdout, last }).toEqual({
        code: 7,
        stdout: "",
        last: `[denied: network] exit 7 (read-only via bwrap, enforcement full): curl: (7) Failed to connect to 127.0.0.1 port ${port} after N ms: Couldn't connect to server`,
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("exec under SIGINT, SIGTERM and a closed pipe", () => {
  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} kills the confined tree, says so, and exits ${code}`, async () => {
      const m = marker();
      const child = start([
        "exec",
        "--mode",
        "read-only",
        "--",
        "sh",
        "-c",
        `sleep ${m} & echo ready; sleep ${m}`,
      ]);
      const done = finish(child);
      await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
      child.kill(signal);
      const run = await done;
      expect({
        code: run.code,
        line: run.stderr
          .trim()
          .split("\n")
          .at(-1)
          ?.replace(/ \(.*\)$/, ""),
      }).toEqual({
        code,
        line: `[interrupted] ${signal}: the confined command was killed`,
      });
      expect(processesWith(`sleep ${m}`)).toEqual([]);
    });
  }

  it("output into a closed pipe ends quietly with 141 and kills the command", async () => {
    const child = start(["exec", "--mode", "read-only", "--", "yes", "suaveplan-epipe"]);
    const done = finish(child);
    await new Promise<void>((resolve) => child.stdout?.once("data", () => resolve()));
    child.stdout?.destroy();
    const run = await done;
    expect({ code: run.code, stack: /\n\s+at /.test(run.stderr) }).toEqual({ code: 141, stack: false });
    expect(processesWith("yes suaveplan-epipe")).toEqual([]);
  });

  it("every other subcommand ends quietly too (no stack trace) when its output pipe closes", async () => {
    for (const args of [
      ["run", "-e", "for (let i = 0; i < 20000; i++) console.log('line', i)"],
      ["--help"],
      ["probe"],
    ]) {
      const child = start(args);
      const done = finish(child);
      child.stdout?.destroy();
      const run = await done;
      expect({ args, code: [0, 141].includes(run.code ?? -1), stack: /\n\s+at /.test(run.stderr) }).toEqual({
        args,
        code: true,
        stack: false,
      });
    }
  });
});

describe("start-up", () => {
  it("--version prints the version without loading the program", async () => {
    const run = await finish(start(["--version"]));
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 0, stdout: "0.1.0\n" });
  });
});
