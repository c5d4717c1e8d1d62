// runConfinedBash with the real LocalSandboxProvider and real bubblewrap.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ConfinedArgv,
  type SandboxPolicy,
  SandboxProvider,
  SandboxUnavailableError,
} from "@suaveplan/dsh-sandbox";
import { BWRAP_RUNNER_FAILURE_RULES, LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { runConfinedBash } from "../src/index.js";

const provider = new LocalSandboxProvider({ backends: ["bwrap"] });
const bwrapUsable = provider.probe()[0]?.available === true;
afterAll(() => provider.dispose());

let dir: string;
let workspace: string;
let outside: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-bash-")));
  workspace = join(dir, "ws");
  outside = join(dir, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A provider that must never be reached. */
class ExplodingProvider extends SandboxProvider {
  calls = 0;
  confine(): ConfinedArgv {
    this.calls++;
    throw new SandboxUnavailableError("no backend here");
  }
}

/** Confines with real bwrap but a bind whose source is missing, so bwrap fails before running the command. */
class BrokenBwrapProvider extends SandboxProvider {
  confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv {
    this.assertConfinedPolicy(policy);
    return {
      argv: ["bwrap", "--ro-bind", join(policy.workspaceRoot, "missing"), "/x", "--", ...argv],
      enforcement: "full",
      denialSignatures: [],
      runnerFailureRules: BWRAP_RUNNER_FAILURE_RULES,
      backend: "broken-bwrap",
    };
  }
}

/** Pids whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

describe.skipIf(!bwrapUsable)("runConfinedBash (real bwrap)", () => {
  it("read-only: writing /etc/x exits non-zero and is attributed to the sandbox (denied)", async () => {
    const result = await runConfinedBash(
      "echo x > /etc/x",
      { mode: "read-only", workspaceRoot: workspace },
      { provider },
    );
    expect(result).toEqual({
      exitCode: 1,
      signal: null,
      stdout: "",
      stderr: "bash: line 1: /etc/x: Read-only file system\n",
      outcome: "denied",
      detail: "bash: line 1: /etc/x: Read-only file system",
      enforcement: "full",
      backend: "bwrap",
      timedOut: false,
      truncated: false,
    });
  });

  it("network deny: a connection to a listener on 127.0.0.1 is denied (reason network), not failed", async () => {
    const server = createServer((socket) => socket.end("reached\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const cut = new LocalSandboxProvider({ backends: ["bwrap"], network: "deny" });
    try {
      const policy = { mode: "read-only", workspaceRoot: workspace } as const;
      const curl = await runConfinedBash(`curl -sS http://127.0.0.1:${port}/`, policy, { provider: cut });
      const node = await runConfinedBash(
        `${JSON.stringify(process.execPath)} -e 'require("net").connect(${port}, "127.0.0.1")'`,
        policy,
        { provider: cut },
      );
      // curl says how long it tried ("after 0 ms"): the one part that varies.
      const ms = (text: string | undefined) => text?.replace(/after \d+ ms/, "after N ms");
      const line = `curl: (7) Failed to connect to 127.0.0.1 port ${port} after N ms: Couldn't connect to server`;
      expect([
        { ...curl, stderr: ms(curl.stderr), detail: ms(curl.detail) },
        { outcome: node.outcome, reason: node.reason, detail: node.detail },
      ]).toEqual([
        {
          exitCode: 7,
          signal: null,
          stdout: "",
          stderr: `${line}\n`,
          outcome: "denied",
          detail: line,
          reason: "network",
          enforcement: "full",
          backend: "bwrap",
          timedOut: false,
          truncated: false,
        },
        {
          outcome: "denied",
          reason: "network",
          detail: `Error: connect EACCES 127.0.0.1:${port} - Local (undefined:undefined)`,
        },
      ]);
    } finally {
      cut.dispose();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("workspace-write: writes land in the workspace, cwd defaults to the workspace root, outside stays denied", async () => {
    const result = await runConfinedBash(
      `pwd; echo hi > f.txt && cat f.txt; echo no > ${JSON.stringify(join(outside, "x"))}`,
      { mode: "workspace-write", workspaceRoot: workspace },
      { provider },
    );
    expect({ exitCode: result.exitCode, stdout: result.stdout, outcome: result.outcome }).toEqual({
      exitCode: 1,
      stdout: `${workspace}\nhi\n`,
      outcome: "denied",
    });
    expect([readFileSync(join(workspace, "f.txt"), "utf8"), existsSync(join(outside, "x"))]).toEqual([
      "hi\n",
      false,
    ]);
  });

  it("ok: exit 0 with output streamed through onStdout/onStderr", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const result = await runConfinedBash(
      "for i in 1 2 3; do echo out$i; echo err$i >&2; done",
      { mode: "read-only", workspaceRoot: workspace },
      { provider, onStdout: (c) => out.push(c), onStderr: (c) => err.push(c) },
    );
    expect({ outcome: result.outcome, stdout: result.stdout, stderr: result.stderr }).toEqual({
      outcome: "ok",
      stdout: "out1\nout2\nout3\n",
      stderr: "err1\nerr2\nerr3\n",
    });
    expect([out.join(""), err.join("")]).toEqual([result.stdout, result.stderr]);
  });

  it("bounds output per stream and appends the truncation sentinel", async () => {
    const chunks: string[] = [];
    const result = await runConfinedBash(
      "head -c 200000 /dev/zero | tr '\\0' a; printf 'é%.0s' $(seq 1 10) >&2",
      { mode: "read-only", workspaceRoot: workspace },
      { provider, maxOutputBytes: 1001, onStdout: (c) => chunks.push(c) },
    );
    expect({
      stdout: result.stdout,
      stderr: result.stderr,
      truncated: result.truncated,
      streamed: chunks.join(""),
    }).toEqual({
      stdout: `${"a".repeat(1001)}[output truncated at 1001 bytes]`,
      stderr: "éééééééééé",
      truncated: true,
      streamed: "a".repeat(1001),
    });
    const cut = await runConfinedBash(
      "printf 'é%.0s' $(seq 1 10)",
      { mode: "read-only", workspaceRoot: workspace },
      { provider, maxOutputBytes: 5 },
    );
    expect(cut.stdout).toBe("éé[output truncated at 5 bytes]");
  });

  it("the default environment is sanitised with the SpawnEngine rules; TMPDIR is the sandbox's temp area", async () => {
    process.env.SUAVEPLAN_TEST_API_TOKEN = "hunter2";
    try {
      const result = await runConfinedBash(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
        'echo "token=${SUAVEPLAN_TEST_API_TOKEN-unset} home=${HOME-unset} path=${PATH:+set}"; printf %s "$TMPDIR"',
        { mode: "workspace-write", workspaceRoot: workspace },
        { provider },
      );
      const [line, tmp] = result.stdout.split("\n");
      expect(line).toBe("token=unset home=unset path=set");
      expect(tmp?.startsWith(tmpdir())).toBe(true);
      // The provider removes a call's private temp area in the background after the call ends.
      await provider.settled();
      expect(existsSync(tmp as string)).toBe(false);
      const inherited = await runConfinedBash(
        'echo "token=$SUAVEPLAN_TEST_API_TOKEN"',
        { mode: "read-only", workspaceRoot: workspace },
        { provider, env: "inherit" },
      );
      expect(inherited.stdout).toBe("token=hunter2\n");
    } finally {
      delete process.env.SUAVEPLAN_TEST_API_TOKEN;
    }
  });

  it("an explicit env map is used verbatim (plus the sandbox's TMPDIR)", async () => {
    const result = await runConfinedBash(
      "env | sort",
      { mode: "read-only", workspaceRoot: workspace },
      {
        provider,
        env: { PATH: "/usr/bin:/bin", ONLY: "this" },
      },
    );
    expect(result.stdout.split("\n").filter((l) => !/^(PWD|SHLVL|_)=/.test(l) && l !== "")).toEqual([
      "ONLY=this",
      "PATH=/usr/bin:/bin",
    ]);
  });

  it.each(["read-only", "danger-full-access"] as const)(
    "the timeout kills the whole process group, grandchildren included (%s)",
    async (mode) => {
      const marker = `987.${process.pid}${mode.length}`;
      const result = await runConfinedBash(
        `sleep ${marker}1 & sleep ${marker}2 & sleep ${marker}3`,
        { mode, workspaceRoot: workspace },
        {
          provider,
          timeout: 500,
        },
      );
      expect({ exitCode: result.exitCode, signal: result.signal, timedOut: result.timedOut }).toEqual({
        exitCode: null,
        signal: "SIGKILL",
        timedOut: true,
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(processesWith(marker)).toEqual([]);
    },
  );

  it("background processes left behind when the shell exits are killed (nothing leaks)", async () => {
    const marker = `986.${process.pid}`;
    const result = await runConfinedBash(
      `sleep ${marker}1 & echo started`,
      { mode: "danger-full-access", workspaceRoot: workspace },
      {
        provider,
        timeout: 20_000,
      },
    );
    expect({ stdout: result.stdout, timedOut: result.timedOut }).toEqual({
      stdout: "started\n",
      timedOut: false,
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(processesWith(marker)).toEqual([]);
  });

  it("an abort signal kills the run like a timeout", async () => {
    const controller = new AbortController();
    const running = runConfinedBash(
      "sleep 30",
      { mode: "read-only", workspaceRoot: workspace },
      { provider, signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 200);
    const result = await running;
    expect({ signal: result.signal, timedOut: result.timedOut }).toEqual({
      signal: "SIGKILL",
      timedOut: true,
    });
  });

  it("danger-full-access runs unconfined and never calls the provider", async () => {
    const exploding = new ExplodingProvider();
    const target = join(outside, "written");
    const result = await runConfinedBash(
      `echo free > ${JSON.stringify(target)}`,
      { mode: "danger-full-access", workspaceRoot: workspace },
      {
        provider: exploding,
      },
    );
    expect({
      outcome: result.outcome,
      enforcement: result.enforcement,
      backend: result.backend,
      calls: exploding.calls,
    }).toEqual({
      outcome: "ok",
      enforcement: "none",
      backend: undefined,
      calls: 0,
    });
    expect(readFileSync(target, "utf8")).toBe("free\n");
  });

  it("fails closed: a provider that cannot confine throws SANDBOX_UNAVAILABLE and nothing runs", async () => {
    const target = join(workspace, "should-not-exist");
    await expect(
      runConfinedBash(
        `touch ${JSON.stringify(target)}`,
        { mode: "workspace-write", workspaceRoot: workspace },
        { provider: new ExplodingProvider() },
      ),
    ).rejects.toMatchObject({ code: "SANDBOX_UNAVAILABLE" });
    expect(existsSync(target)).toBe(false);
  });

  it("a runner that fails before the command runs is a runner-failure, not a task failure", async () => {
    const result = await runConfinedBash(
      "echo never",
      { mode: "read-only", workspaceRoot: workspace },
      { provider: new BrokenBwrapProvider() },
    );
    expect({
      exitCode: result.exitCode,
      stdout: result.stdout,
      outcome: result.outcome,
      detail: result.detail,
      backend: result.backend,
    }).toEqual({
      exitCode: 1,
      stdout: "",
      outcome: "runner-failure",
      detail: `bwrap: Can't find source path ${join(workspace, "missing")}: No such file or directory`,
      backend: "broken-bwrap",
    });
  });

  it("a runner that cannot even be spawned is a runner-failure with the spawn error as detail", async () => {
    class MissingRunner extends SandboxProvider {
      confine(argv: readonly string[]): ConfinedArgv {
        return {
          argv: ["/nonexistent/runner", ...argv],
          enforcement: "full",
          denialSignatures: [],
          runnerFailureRules: [],
        };
      }
    }
    const result = await runConfinedBash(
      "true",
      { mode: "read-only", workspaceRoot: workspace },
      { provider: new MissingRunner() },
    );
    expect(result).toEqual({
      exitCode: null,
      signal: null,
      stdout: "",
      stderr: "",
      outcome: "runner-failure",
      detail: "spawn failed: ENOENT",
      enforcement: "full",
      backend: "unknown",
      timedOut: false,
      truncated: false,
    });
  });

  it("the shell gets stdio only: the sandbox adds no file descriptors", async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
    const script = 'for f in /proc/$$/fd/*; do n=${f##*/}; t=$(readlink "$f"); echo "$n ${t%%:*}"; done';
    const confined = await runConfinedBash(
      script,
      { mode: "read-only", workspaceRoot: workspace },
      { provider },
    );
    const plain = await runConfinedBash(
      script,
      { mode: "danger-full-access", workspaceRoot: workspace },
      { provider },
    );
    const fds = (out: string): string[] =>
      out
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("3 "));
    expect(fds(confined.stdout)).toEqual(fds(plain.stdout));
    expect(fds(confined.stdout).slice(0, 3)).toEqual(["0 /dev/null", "1 socket", "2 socket"]);
  });
});

describe("runConfinedBash input checks", () => {
  const provider = new ExplodingProvider();
  const policy = { mode: "read-only", workspaceRoot: "/" } as const;
  it("rejects a bad command, policy and options naming the field", async () => {
    await expect(runConfinedBash(1 as unknown as string, policy, { provider })).rejects.toThrow(
      "runConfinedBash: command must be a string without NUL bytes (SANDBOX_INVALID_OPTIONS)",
    );
    await expect(
      runConfinedBash("true", { mode: "rw" as "read-only", workspaceRoot: "/" }, { provider }),
    ).rejects.toThrow(
      'policy.mode must be "read-only", "workspace-write" or "danger-full-access" (SANDBOX_INVALID_POLICY)',
    );
    await expect(
      runConfinedBash("true", { mode: "read-only", workspaceRoot: "rel" }, { provider }),
    ).rejects.toThrow("policy.workspaceRoot must be an absolute path (SANDBOX_INVALID_POLICY)");
    await expect(runConfinedBash("true", policy, { provider, timeout: 0 })).rejects.toThrow(
      "runConfinedBash: options.timeout must be a positive number of ms (SANDBOX_INVALID_OPTIONS)",
    );
    await expect(runConfinedBash("true", policy, { provider, maxOutputBytes: -1 })).rejects.toThrow(
      "runConfinedBash: options.maxOutputBytes must be a non-negative integer (SANDBOX_INVALID_OPTIONS)",
    );
    await expect(
      runConfinedBash("true", policy, { provider, env: { A: 1 as unknown as string } }),
    ).rejects.toThrow("runConfinedBash: options.env.A must be a string (SANDBOX_INVALID_OPTIONS)");
    await expect(runConfinedBash("true", policy, {} as never)).rejects.toThrow(
      "runConfinedBash: options.provider must be a SandboxProvider (SANDBOX_INVALID_OPTIONS)",
    );
    expect(provider.calls).toBe(0);
  });
});
