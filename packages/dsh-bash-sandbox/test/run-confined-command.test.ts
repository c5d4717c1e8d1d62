import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConfinedArgv, type SandboxPolicy, SandboxProvider } from "@suaveplan/dsh-sandbox";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runConfinedCommand, sanitisedEnvironment } from "../src/index.js";

/** A provider that records each policy and wraps the argv in `env` (a real program, no confinement). */
class RecordingProvider extends SandboxProvider {
  readonly policies: SandboxPolicy[] = [];
  confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv {
    this.assertConfinedPolicy(policy);
    this.policies.push(policy);
    return { argv: ["env", ...argv], enforcement: "full", denialSignatures: [], runnerFailureRules: [] };
  }
}

let workspace: string;
beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-command-")));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

describe("runConfinedCommand", () => {
  it("spawns any argv through the provider and attributes the result", async () => {
    const provider = new RecordingProvider();
    const result = await runConfinedCommand(
      ["sh", "-c", "echo out; echo err >&2; exit 3"],
      {
        mode: "read-only",
        workspaceRoot: workspace,
      },
      { provider },
    );
    expect(result).toEqual({
      exitCode: 3,
      signal: null,
      stdout: "out\n",
      stderr: "err\n",
      outcome: "failed",
      detail: undefined,
      enforcement: "full",
      backend: "unknown",
      timedOut: false,
      truncated: false,
    });
  });

  it("passes provider-specific policy extensions to confine, snapshotted", async () => {
    const provider = new RecordingProvider();
    const writableRoots = ["/cache"];
    const policy = {
      mode: "workspace-write",
      workspaceRoot: workspace,
      writableRoots,
      denyRead: ["~/.ssh"],
    } as const;
    const pending = runConfinedCommand(["true"], policy, { provider });
    writableRoots.push("/late");
    await pending;
    expect(provider.policies).toEqual([
      { mode: "workspace-write", workspaceRoot: workspace, writableRoots: ["/cache"], denyRead: ["~/.ssh"] },
    ]);
  });

  it("refuses an empty argv or one holding NUL bytes, naming its caller", async () => {
    const provider = new RecordingProvider();
    const policy = { mode: "read-only", workspaceRoot: workspace } as const;
    await expect(runConfinedCommand([], policy, { provider })).rejects.toThrow(
      "runConfinedCommand: argv must be a non-empty array of strings without NUL bytes",
    );
    await expect(runConfinedCommand(["a\0b"], policy, { provider }, "runConfinedPwsh")).rejects.toThrow(
      "runConfinedPwsh: argv must be a non-empty array of strings without NUL bytes",
    );
  });
});

describe("sanitisedEnvironment", () => {
  it("drops identity keys, secrets, credential URLs and shell hooks, keeps the rest", () => {
    expect(
      sanitisedEnvironment({
        PATH: "/bin",
        HOME: "/root",
        USER: "root",
        GITHUB_TOKEN: "x",
        MYSQL_PWD: "x",
        DATABASE_URL: "postgres://u:pw@h/db",
        BASH_ENV: "/evil",
        PWD: "/w",
        LANG: "C",
      }),
    ).toEqual({ PATH: "/bin", PWD: "/w", LANG: "C" });
  });
});
