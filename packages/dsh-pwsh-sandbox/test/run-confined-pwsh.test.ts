import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ConfinedArgv, type SandboxPolicy, SandboxProvider } from "@suaveplan/dsh-sandbox";
import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { PWSH_SWITCHES, pwshCapabilities, runConfinedPwsh } from "../src/index.js";

/** Records what it was asked to confine and runs `true` instead (no PowerShell needed). */
class RecordingProvider extends SandboxProvider {
  readonly argvs: string[][] = [];
  confine(argv: readonly string[], policy: SandboxPolicy): ConfinedArgv {
    this.assertConfinedPolicy(policy);
    this.argvs.push([...argv]);
    return { argv: ["true", ...argv], enforcement: "full", denialSignatures: [], runnerFailureRules: [] };
  }
}

let workspace: string;
beforeEach(() => {
  workspace = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-pwsh-")));
});
afterEach(() => rmSync(workspace, { recursive: true, force: true }));

describe("runConfinedPwsh (any host)", () => {
  it("asks the provider to confine pwsh -NoLogo -NoProfile -NonInteractive -Command <script>", async () => {
    const provider = new RecordingProvider();
    const result = await runConfinedPwsh(
      "Write-Output 'hi'",
      { mode: "read-only", workspaceRoot: workspace },
      { provider },
    );
    expect({ argvs: provider.argvs, outcome: result.outcome }).toEqual({
      argvs: [["pwsh", ...PWSH_SWITCHES, "-Command", "Write-Output 'hi'"]],
      outcome: "ok",
    });
  });

  it("refuses an empty script and a bad pwsh option with SANDBOX_INVALID_OPTIONS naming the field", async () => {
    const provider = new RecordingProvider();
    const policy = { mode: "read-only", workspaceRoot: workspace } as const;
    const errors = await Promise.all([
      runConfinedPwsh("  ", policy, { provider }).catch((e: Error & { code: string }) => [e.code, e.message]),
      runConfinedPwsh("1", policy, { provider, pwsh: "" }).catch((e: Error & { code: string }) => [
        e.code,
        e.message,
      ]),
      runConfinedPwsh("1", policy, { provider, timeout: -1 }).catch((e: Error & { code: string }) => [
        e.code,
        e.message,
      ]),
    ]);
    expect(errors).toEqual([
      [
        "SANDBOX_INVALID_OPTIONS",
        "runConfinedPwsh: script must not be empty or blank (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
      ],
      [
        "SANDBOX_INVALID_OPTIONS",
        "runConfinedPwsh: options.pwsh must be a non-empty string without NUL bytes (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
      ],
      [
        "SANDBOX_INVALID_OPTIONS",
        "runConfinedPwsh: options.timeout must be a positive number of ms (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
      ],
    ]);
  });

  it("pwshCapabilities says why not when pwsh is not on PATH", () => {
    expect(pwshCapabilities("pwsh", { PATH: "/nonexistent" })).toEqual({
      available: false,
      reason:
        'PowerShell is not installed: no executable "pwsh" on PATH (install PowerShell 7, which provides pwsh)',
    });
  });
});

// Runs for real only where PowerShell is installed (it is not on this project's CI machines).
describe.skipIf(!pwshCapabilities().available)("runConfinedPwsh with pwsh and the local provider", () => {
  const provider = new LocalSandboxProvider();
  afterAll(() => provider.dispose());

  it("a write outside the workspace under read-only is denied and nothing is written", async () => {
    const outside = join(tmpdir(), `suaveplan-pwsh-outside-${process.pid}`);
    const result = await runConfinedPwsh(
      `Set-Content -Path '${outside}' -Value x`,
      { mode: "read-only", workspaceRoot: workspace },
      { provider },
    );
    expect({ outcome: result.outcome, written: existsSync(outside) }).toEqual({
      outcome: "denied",
      written: false,
    });
  });

  it("writes inside the workspace under workspace-write, with the command's output", async () => {
    const result = await runConfinedPwsh(
      "Set-Content -Path made.txt -Value hello; Write-Output done",
      { mode: "workspace-write", workspaceRoot: workspace },
      { provider },
    );
    expect({
      outcome: result.outcome,
      stdout: result.stdout,
      file: readFileSync(join(workspace, "made.txt"), "utf8"),
    }).toEqual({
      outcome: "ok",
      stdout: "done\n",
      file: "hello\n",
    });
  });

  it("the timeout kills the script", async () => {
    const result = await runConfinedPwsh(
      "Start-Sleep -Seconds 30",
      { mode: "read-only", workspaceRoot: workspace },
      {
        provider,
        timeout: 500,
      },
    );
    expect(result.timedOut).toBe(true);
  });
});
