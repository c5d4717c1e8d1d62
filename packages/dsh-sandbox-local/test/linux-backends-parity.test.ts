// One table, every Linux backend: behaviours each backend must show the same
// way, spawned exactly as the contract says (the returned argv, stdio only).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SandboxPolicy } from "@suaveplan/dsh-sandbox";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LocalBackendName } from "../src/backend/index.js";
import { LocalSandboxProvider } from "../src/index.js";
import { runConfined } from "./support/run-confined.js";

const LINUX_BACKENDS: readonly LocalBackendName[] = ["bwrap", "landlock", "landlock+bwrap"];
const hasScript = readdirSync("/usr/bin").includes("script");
const hasPerl = readdirSync("/usr/bin").includes("perl");

/** Processes whose command line contains `marker`. */
/**
 * The processes still carrying `marker` once the sandbox's teardown has had
 * up to a second to finish: a killed process keeps its command line until
 * the kernel has torn it down, which a loaded machine can take a moment for.
 */
async function processesAfterTeardown(marker: string): Promise<string[]> {
  let found = processesWith(marker);
  for (let i = 0; i < 20 && found.length > 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = processesWith(marker);
  }
  return found;
}

function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      if (cmdline.includes(marker)) found.push(cmdline);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

for (const name of LINUX_BACKENDS) {
  const usable = new LocalSandboxProvider({ backends: [name] }).probe()[0]?.available === true;
  describe.skipIf(!usable)(`${name}: shared behaviour`, () => {
    const provider = new LocalSandboxProvider({ backends: [name] });
    const deny = new LocalSandboxProvider({ backends: [name], network: "deny" });
    afterAll(() => {
      provider.dispose();
      deny.dispose();
    });
    let dir: string;
    let workspace: string;
    let readOnly: SandboxPolicy;
    let workspaceWrite: SandboxPolicy;
    beforeEach(() => {
      dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-parity-")));
      workspace = join(dir, "ws");
      mkdirSync(workspace);
      readOnly = { mode: "read-only", workspaceRoot: workspace };
      workspaceWrite = { mode: "workspace-write", workspaceRoot: workspace };
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("the returned argv alone gives the command its private TMPDIR (spawned without merging env)", async () => {
      const run = await runConfined(
        provider,
        'f=$(mktemp) && echo "$TMPDIR" && dirname "$f"',
        workspaceWrite,
        {
          mergeConfinedEnv: false,
        },
      );
      const tmp = run.confined.env?.TMPDIR;
      expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({
        exitCode: 0,
        stdout: `${tmp}\n${tmp}\n`,
      });
    });

    it.skipIf(!hasScript)("a pty can be opened (/dev/ptmx and /dev/pts) under both modes", async () => {
      for (const policy of [readOnly, workspaceWrite]) {
        const run = await runConfined(provider, "script -qec tty /dev/null", policy);
        expect({ mode: policy.mode, exitCode: run.exitCode, stdout: run.stdout.trim() }).toEqual({
          mode: policy.mode,
          exitCode: 0,
          stdout: expect.stringMatching(/^\/dev\/pts\/\d+$/),
        });
      }
    });

    it("nothing can be created under /dev, while /dev/null stays a writable sink", async () => {
      const run = await runConfined(
        provider,
        "echo sink > /dev/null && echo null-ok; touch /dev/suaveplan-made 2>/dev/null && echo created || echo refused",
        workspaceWrite,
      );
      expect(run.stdout).toBe("null-ok\nrefused\n");
    });

    it.skipIf(!hasPerl)(
      'network "deny" refuses AF_NETLINK, AF_VSOCK, AF_PACKET and AF_INET sockets',
      async () => {
        // socket(2) for each family; AF_UNIX is checked by the UNIX-socket tests.
        const script = `perl -e 'for my $f ([netlink => 16, 3], [vsock => 40, 1], [packet => 17, 3], [inet => 2, 2]) { my ($n, $fam, $type) = @$f; if (socket(my $s, $fam, $type, 0)) { print "$n open\\n" } else { print "$n refused\\n" } }'`;
        const run = await runConfined(deny, script, readOnly);
        expect({ exitCode: run.exitCode, stdout: run.stdout }).toEqual({
          exitCode: 0,
          stdout: "netlink refused\nvsock refused\npacket refused\ninet refused\n",
        });
      },
    );

    it("background jobs, double forks, setsid, nohup and true daemons do not outlive the command (argv spawned directly)", async () => {
      const marker = `${(Math.random() * 1000 + 600).toFixed(4)}`;
      const run = await runConfined(
        provider,
        // A background job, a double fork, setsid, nohup, and a true daemon (new session, re-parented, stdio closed).
        `sleep ${marker} & (sleep ${marker} &) ; setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & ( setsid sh -c 'sleep ${marker} >/dev/null 2>&1 &' & ) ; echo started`,
        readOnly,
      );
      expect(run.stdout).toBe("started\n");
      expect(await processesAfterTeardown(`sleep ${marker}`)).toEqual([]);
    });
  });
}
