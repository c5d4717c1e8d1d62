// Adversarial review of runConfinedBash with real processes: escapes from the
// process group, output floods, stdio tricks, secrets, inherited descriptors,
// hostile inputs and policies, concurrency and a disposed provider.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxExecutionPolicy } from "@suaveplan/dsh-sandbox";
import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ConfinedBashResult, runConfinedBash } from "../src/index.js";

const bwrap = new LocalSandboxProvider({ backends: ["bwrap"] });
const landlock = new LocalSandboxProvider({ backends: ["landlock"] });
const bwrapUsable = bwrap.probe()[0]?.available === true;
const landlockUsable = landlock.probe()[0]?.available === true;
afterAll(() => {
  bwrap.dispose();
  landlock.dispose();
});

let dir: string;
let workspace: string;
let outside: string;
const markers: string[] = [];
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-bash-adv-")));
  workspace = join(dir, "ws");
  outside = join(dir, "outside");
  mkdirSync(workspace);
  mkdirSync(outside);
});
afterEach(() => {
  // Whatever a failing test left behind is killed here, so the suite never leaks processes.
  for (const marker of markers.splice(0)) {
    for (const pid of processesWith(marker)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone
      }
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A unique number usable as a `sleep` argument, recorded for cleanup. */
function marker(): string {
  const value = `9${Math.floor(Math.random() * 1e6)}.${process.pid}${markers.length}`;
  markers.push(value);
  return value;
}

/** Pids whose command line contains `text`. */
function processesWith(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
      if (cmdline.includes(text) && state !== "Z") found.push(pid);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** The call's result, or "HANG" when it has not resolved within `ms`. */
async function within(ms: number, run: Promise<ConfinedBashResult>): Promise<ConfinedBashResult | "HANG"> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<"HANG">((resolve) => {
    timer = setTimeout(() => resolve("HANG"), ms);
  });
  try {
    return await Promise.race([run, hang]);
  } finally {
    clearTimeout(timer);
  }
}

const settle = (ms = 150): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const escapes = (m: string): string =>
  [
    `sleep ${m}1 & sleep ${m}2 &`,
    `setsid sleep ${m}3 &`,
    `nohup sleep ${m}4 >/dev/null 2>&1 &`,
    `( setsid sh -c 'sleep ${m}5 &' & )`,
    `( set -m; sleep ${m}6 >/dev/null 2>&1 & )`,
  ].join("\n");

const cases = [
  ["danger-full-access", bwrap, true],
  ["read-only", bwrap, bwrapUsable],
  ["read-only", landlock, landlockUsable],
] as const;

describe.skipIf(process.platform !== "linux")("runConfinedBash under attack (real processes)", () => {
  describe("process lifetime", () => {
    it.each(cases)(
      "the timeout leaves no background, setsid, nohup, job-control or double-forked descendant behind (%s, %s)",
      async (mode, provider, usable) => {
        if (!usable) return;
        const m = marker();
        const started = Date.now();
        const result = await within(
          8_000,
          runConfinedBash(
            `${escapes(m)}\nsleep ${m}7; wait`,
            { mode, workspaceRoot: workspace },
            {
              provider,
              timeout: 600,
            },
          ),
        );
        expect(result === "HANG" ? "HANG" : [result.timedOut, result.stderr]).toEqual([true, ""]);
        expect(Date.now() - started).toBeLessThan(3_000);
        await settle();
        expect(processesWith(m)).toEqual([]);
      },
    );

    it.each(cases)(
      "a setsid'd grandchild holding stdout open neither hangs the call nor outlives it (%s, %s)",
      async (mode, provider, usable) => {
        if (!usable) return;
        const m = marker();
        const result = await within(
          8_000,
          runConfinedBash(
            `setsid sleep ${m}1 & ( setsid sh -c 'sleep ${m}2 &' & ); sleep 0.3; echo started`,
            { mode, workspaceRoot: workspace },
            { provider, timeout: 30_000 },
          ),
        );
        expect(result === "HANG" ? "HANG" : { stdout: result.stdout, timedOut: result.timedOut }).toEqual({
          stdout: "started\n",
          timedOut: false,
        });
        await settle();
        expect(processesWith(m)).toEqual([]);
      },
    );

    it("a command that closes stdout and stderr but never exits is still timed out and killed", async () => {
      const m = marker();
      const result = await within(
        8_000,
        runConfinedBash(
          `exec >&- 2>&-; sleep ${m}`,
          { mode: "danger-full-access", workspaceRoot: workspace },
          {
            provider: bwrap,
            timeout: 400,
          },
        ),
      );
      expect(result === "HANG" ? "HANG" : [result.timedOut, result.signal]).toEqual([true, "SIGKILL"]);
      await settle();
      expect(processesWith(m)).toEqual([]);
    });

    it("stdin is /dev/null: a reader gets EOF at once, and closing stdin is harmless", async () => {
      const result = await runConfinedBash(
        'cat; read -r line || echo eof; exec 0<&-; echo "closed"',
        { mode: "danger-full-access", workspaceRoot: workspace },
        { provider: bwrap, timeout: 5_000 },
      );
      expect([result.stdout, result.exitCode, result.timedOut]).toEqual(["eof\nclosed\n", 0, false]);
    });

    it("a throwing onStdout callback rejects the call (no uncaught exception) and kills the command", async () => {
      const m = marker();
      const boom = new Error("consumer failed");
      await expect(
        within(
          8_000,
          runConfinedBash(
            `echo first; sleep ${m}`,
            { mode: "danger-full-access", workspaceRoot: workspace },
            {
              provider: bwrap,
              timeout: 20_000,
              onStdout: () => {
                throw boom;
              },
            },
          ),
        ),
      ).rejects.toBe(boom);
      await settle();
      expect(processesWith(m)).toEqual([]);
    });
  });

  describe("output floods", () => {
    it("an endless `yes` is bounded in memory, truncated, reported and killed by the timeout", async () => {
      const before = process.memoryUsage().rss;
      const result = await runConfinedBash(
        "yes",
        { mode: "danger-full-access", workspaceRoot: workspace },
        {
          provider: bwrap,
          timeout: 1_500,
        },
      );
      const grown = process.memoryUsage().rss - before;
      expect({
        truncated: result.truncated,
        timedOut: result.timedOut,
        length: result.stdout.length,
        tail: result.stdout.slice(-40),
      }).toEqual({
        truncated: true,
        timedOut: true,
        length: 1024 * 1024 + "[output truncated at 1048576 bytes]".length,
        tail: `\ny\ny\n${"[output truncated at 1048576 bytes]"}`,
      });
      expect(grown).toBeLessThan(256 * 1024 * 1024);
    });

    it("2 GiB on stdout is drained (the command completes) while keeping only maxOutputBytes", async () => {
      const before = process.memoryUsage().rss;
      const result = await runConfinedBash(
        "head -c 2G /dev/zero; echo done >&2",
        { mode: "read-only", workspaceRoot: workspace },
        { provider: bwrapUsable ? bwrap : landlock, timeout: 60_000, maxOutputBytes: 4096 },
      );
      expect({
        exitCode: result.exitCode,
        stderr: result.stderr,
        truncated: result.truncated,
        length: result.stdout.length,
      }).toEqual({
        exitCode: 0,
        stderr: "done\n",
        truncated: true,
        length: 4096 + "[output truncated at 4096 bytes]".length,
      });
      expect(process.memoryUsage().rss - before).toBeLessThan(256 * 1024 * 1024);
    }, 90_000);
  });

  describe("environment and descriptors", () => {
    const secrets: Record<string, string> = {
      AWS_SECRET_ACCESS_KEY: "leak-aws",
      aws_secret_access_key: "leak-aws-lower",
      AWS_SESSION_TOKEN: "leak-aws-session",
      GITHUB_TOKEN: "leak-gh",
      github_token: "leak-gh-lower",
      OPENAI_API_KEY: "leak-openai",
      my_api_key: "leak-api-lower",
      NPM_TOKEN: "leak-npm",
      SSH_AUTH_SOCK: "/leak/ssh-agent.sock",
      MYSQL_PWD: "leak-mysql",
      GPG_PASSPHRASE: "leak-gpg",
      SMTP_PASS: "leak-smtp",
      REDIS_PASSWD: "leak-redis",
      CI_JOB_JWT: "leak-jwt",
      SESSION_COOKIE: "leak-cookie",
      SENTRY_DSN: "leak-sentry",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/leak/bus",
      DATABASE_URL: "postgres://app:leak-db@db.internal/app",
      BASH_ENV: "/leak/bash-env",
      "BASH_FUNC_echo%%": "() { builtin echo leak-func; }",
    };

    it("sanitised (the default) strips secrets under any case, short password names, credential URLs and shell hooks", async () => {
      Object.assign(process.env, secrets, { PLAIN_SETTING: "kept", REPO_URL: "https://example.org/x.git" });
      try {
        const result = await runConfinedBash(
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
          'env; echo "pwd=${PWD:+set}"',
          { mode: "read-only", workspaceRoot: workspace },
          { provider: bwrapUsable ? bwrap : landlock },
        );
        const leaked = Object.entries(secrets).filter(
          ([key, value]) => result.stdout.includes(value) || result.stdout.includes(`${key}=`),
        );
        expect(leaked).toEqual([]);
        expect(result.stdout).toContain("PLAIN_SETTING=kept\n");
        expect(result.stdout).toContain("REPO_URL=https://example.org/x.git\n");
        expect(result.stdout).toContain("pwd=set\n");
      } finally {
        for (const key of [...Object.keys(secrets), "PLAIN_SETTING", "REPO_URL"]) delete process.env[key];
      }
    });

    it.each([
      ["danger-full-access", true],
      ["read-only", bwrapUsable],
    ] as const)(
      "descriptors the shell inherits above stdio are closed before the command runs (%s)",
      async (mode, usable) => {
        if (!usable) return;
        // A "bash" that, like a host process leaking a descriptor without close-on-exec,
        // starts the real shell with descriptor 7 open.
        const leaky = join(dir, "leaky-bash");
        writeFileSync(leaky, '#!/bin/sh\nexec 7</dev/null\nexec bash "$@"\n');
        chmodSync(leaky, 0o755);
        const result = await runConfinedBash(
          // No fork while listing: a pipeline or $(…) would add its own pipe descriptors.
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion
          'for f in /proc/$$/fd/*; do [ -e "$f" ] && printf "%s " "${f##*/}"; done; (: <&7) 2>/dev/null && echo fd7-open || echo fd7-closed',
          { mode, workspaceRoot: workspace },
          { provider: bwrap, bash: leaky },
        );
        expect(result.stdout).toBe("0 1 2 fd7-closed\n");
      },
    );
  });

  describe("inputs", () => {
    const policy = (): SandboxExecutionPolicy => ({ mode: "read-only", workspaceRoot: workspace });

    it("rejects an empty or blank command", async () => {
      for (const command of ["", "  \n\t"]) {
        await expect(runConfinedBash(command, policy(), { provider: bwrap })).rejects.toThrow(
          "runConfinedBash: command must not be empty or blank (SANDBOX_INVALID_OPTIONS)",
        );
      }
    });

    it("rejects a timeout setTimeout cannot honour instead of killing the command at once", async () => {
      await expect(runConfinedBash("true", policy(), { provider: bwrap, timeout: 3e9 })).rejects.toThrow(
        "runConfinedBash: options.timeout must be at most 2147483647 ms (SANDBOX_INVALID_OPTIONS)",
      );
      for (const timeout of [-1, Number.NaN, Number.POSITIVE_INFINITY, "100" as unknown as number]) {
        await expect(runConfinedBash("true", policy(), { provider: bwrap, timeout })).rejects.toThrow(
          "runConfinedBash: options.timeout must be a positive number of ms (SANDBOX_INVALID_OPTIONS)",
        );
      }
    });

    it("a cwd that does not exist is a coded input error, not a runner failure", async () => {
      await expect(
        runConfinedBash("true", policy(), { provider: bwrap, cwd: join(workspace, "missing") }),
      ).rejects.toThrow(
        "runConfinedBash: options.cwd must name an existing directory (SANDBOX_INVALID_OPTIONS)",
      );
    });

    it("a cwd outside the workspace (directly or through a symlink) is refused under every mode", async () => {
      symlinkSync(outside, join(workspace, "escape"));
      for (const mode of ["read-only", "workspace-write", "danger-full-access"] as const) {
        for (const cwd of [outside, join(workspace, "escape"), join(workspace, "..")]) {
          await expect(
            runConfinedBash("pwd", { mode, workspaceRoot: workspace }, { provider: bwrap, cwd }),
          ).rejects.toThrow(
            "runConfinedBash: options.cwd must lie inside policy.workspaceRoot (SANDBOX_INVALID_OPTIONS)",
          );
        }
      }
    });

    it("a workspace given through a symlink runs in (and writes to) its canonical directory", async () => {
      const link = join(dir, "ws-link");
      symlinkSync(workspace, link);
      mkdirSync(join(workspace, "sub"));
      const result = await runConfinedBash(
        "pwd; echo hi > f",
        { mode: "danger-full-access", workspaceRoot: link },
        { provider: bwrap, cwd: join(link, "sub") },
      );
      expect([result.stdout, readFileSync(join(workspace, "sub", "f"), "utf8")]).toEqual([
        `${join(workspace, "sub")}\n`,
        "hi\n",
      ]);
      await expect(
        runConfinedBash(
          "pwd",
          { mode: "read-only", workspaceRoot: join(dir, "missing") },
          { provider: bwrap },
        ),
      ).rejects.toThrow("policy.workspaceRoot must name an existing directory (SANDBOX_INVALID_POLICY)");
    });

    it("malformed callbacks, signal, shell and env entries are coded errors naming the field", async () => {
      const bad: Array<[Record<string, unknown>, string]> = [
        [{ onStdout: 5 }, "options.onStdout must be a function"],
        [{ onStderr: "x" }, "options.onStderr must be a function"],
        [{ signal: {} }, "options.signal must be an AbortSignal"],
        [{ bash: 5 }, "options.bash must be a non-empty string without NUL bytes"],
        [{ bash: "" }, "options.bash must be a non-empty string without NUL bytes"],
        [{ env: { A: "x\0y" } }, "options.env.A must not contain NUL bytes"],
        [
          { env: { "A=B": "x" } },
          'options.env keys must be non-empty names without "=" or NUL bytes, got "A=B"',
        ],
        [{ env: ["PATH=/bin"] }, 'options.env must be "sanitised", "inherit" or a map of strings'],
      ];
      for (const mode of ["read-only", "danger-full-access"] as const) {
        for (const [extra, message] of bad) {
          await expect(
            runConfinedBash("true", { mode, workspaceRoot: workspace }, { provider: bwrap, ...extra }),
          ).rejects.toThrow(`runConfinedBash: ${message} (SANDBOX_INVALID_OPTIONS)`);
        }
      }
    });
  });

  describe("policy and provider", () => {
    it.skipIf(!bwrapUsable)(
      "a policy whose mode changes between reads is decided once: validated read-only never runs unconfined",
      async () => {
        let reads = 0;
        const shifty = {
          workspaceRoot: workspace,
          get mode() {
            reads++;
            return reads === 1 ? "read-only" : "danger-full-access";
          },
        } as unknown as SandboxExecutionPolicy;
        const target = join(workspace, "written");
        const result = await runConfinedBash(`echo x > ${JSON.stringify(target)}`, shifty, {
          provider: bwrap,
        });
        expect({
          enforcement: result.enforcement,
          outcome: result.outcome,
          written: existsSync(target),
        }).toEqual({
          enforcement: "full",
          outcome: "denied",
          written: false,
        });
      },
    );

    it.skipIf(!bwrapUsable)("concurrent runs keep their own output, limits and timeouts", async () => {
      const m = marker();
      const runs = Array.from({ length: 8 }, (_, i) =>
        runConfinedBash(
          i === 3
            ? `echo slow; sleep ${m}`
            : `for n in 1 2 3; do echo run${i}-$n; done; echo err${i} >&2; exit ${i}`,
          { mode: i % 2 === 0 ? "read-only" : "workspace-write", workspaceRoot: workspace },
          { provider: bwrap, timeout: i === 3 ? 700 : 20_000 },
        ),
      );
      const results = await Promise.all(runs);
      for (const [i, result] of results.entries()) {
        if (i === 3) {
          expect([result.stdout, result.timedOut]).toEqual(["slow\n", true]);
          continue;
        }
        expect([result.stdout, result.stderr, result.exitCode, result.timedOut]).toEqual([
          `run${i}-1\nrun${i}-2\nrun${i}-3\n`,
          `err${i}\n`,
          i,
          false,
        ]);
      }
      await settle();
      expect(processesWith(m)).toEqual([]);
    });

    it("a disposed provider refuses with SANDBOX_UNAVAILABLE and nothing runs; danger-full-access never asks it", async () => {
      const provider = new LocalSandboxProvider({ backends: ["bwrap"] });
      provider.dispose();
      const target = join(workspace, "ran");
      await expect(
        runConfinedBash(
          `touch ${JSON.stringify(target)}`,
          { mode: "workspace-write", workspaceRoot: workspace },
          {
            provider,
          },
        ),
      ).rejects.toMatchObject({ code: "SANDBOX_UNAVAILABLE" });
      expect(existsSync(target)).toBe(false);
      const free = await runConfinedBash(
        `touch ${JSON.stringify(target)}`,
        { mode: "danger-full-access", workspaceRoot: workspace },
        { provider },
      );
      expect([free.outcome, free.enforcement, existsSync(target)]).toEqual(["ok", "none", true]);
    });
  });
});
