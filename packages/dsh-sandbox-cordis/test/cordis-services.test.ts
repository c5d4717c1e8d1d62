// A real Cordis Context loads the plugins; a real command is confined by bwrap through ctx.sandbox.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runConfinedBash } from "@suaveplan/dsh-bash-sandbox";
import { SandboxPolicyService, type Session } from "@suaveplan/dsh-sandbox";
import { LocalSandboxProvider } from "@suaveplan/dsh-sandbox-local";
import { Context, Logger } from "cordis";
import { afterAll, describe, expect, it } from "vitest";
import {
  bashSandboxPlugin,
  pwshSandboxPlugin,
  sandboxPolicyPlugin,
  sandboxProviderPlugin,
} from "../src/index.js";

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-cordis-")));
const fallbackRoot = join(scratch, "fallback");
const sessionCwd = join(scratch, "session");
const outside = join(scratch, "outside");
const tempRoot = join(scratch, "temp");
for (const dir of [fallbackRoot, sessionCwd, outside, tempRoot]) mkdirSync(dir);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Resolves once the context has run its pending plugin set-ups. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

function session(events: Session["events"] = []): Session {
  return { id: "s-1", cwd: sessionCwd, events };
}

describe("Cordis services of the process sandbox", () => {
  it("registers ctx.sandbox (the local provider) and ctx.sandboxPolicy, configured through the plugins' schemas", async () => {
    const ctx = new Context();
    const forks: Array<{ dispose(): unknown }> = [];
    forks.push(ctx.plugin(sandboxProviderPlugin, { backends: ["bwrap"], network: "deny", tempRoot }));
    forks.push(ctx.plugin(sandboxPolicyPlugin, { workspaceRoot: fallbackRoot }));
    await settle();
    expect(ctx.sandbox).toBeInstanceOf(LocalSandboxProvider);
    expect(ctx.sandboxPolicy).toBeInstanceOf(SandboxPolicyService);
    // The schema filled the default mode in.
    expect(ctx.sandboxPolicy.defaultMode).toBe("read-only");
    // Agentless: the configured root. A session: its cwd, and its last sandbox/mode event.
    expect(ctx.sandboxPolicy.resolve()).toEqual({ mode: "read-only", workspaceRoot: fallbackRoot });
    const s = session([
      { type: "sandbox/mode", mode: "read-only" },
      { type: "sandbox/mode", mode: "workspace-write" },
    ]);
    expect(ctx.sandboxPolicy.resolve({ session: s })).toEqual({
      mode: "workspace-write",
      workspaceRoot: sessionCwd,
      sessionId: "s-1",
    });
    expect(ctx.sandboxPolicy.overrideOf(s)).toBe("workspace-write");
    // An explicit approved mode outranks the session.
    expect(ctx.sandboxPolicy.resolve({ session: s, mode: "read-only" }).mode).toBe("read-only");
    for (const fork of forks) fork.dispose();
  });

  it("confines a real command through ctx.sandbox with the policy from ctx.sandboxPolicy.resolve({ session })", async () => {
    const ctx = new Context();
    const forks: Array<{ dispose(): unknown }> = [];
    forks.push(ctx.plugin(sandboxProviderPlugin, { backends: ["bwrap"], network: "deny", tempRoot }));
    forks.push(ctx.plugin(sandboxPolicyPlugin, { workspaceRoot: fallbackRoot }));
    await settle();
    const policy = ctx.sandboxPolicy.resolve({
      session: session([{ type: "sandbox/mode", mode: "workspace-write" }]),
    });
    const result = await runConfinedBash(`echo in > in.txt; echo out > ${join(outside, "x")}`, policy, {
      provider: ctx.sandbox,
    });
    expect({ outcome: result.outcome, backend: result.backend, enforcement: result.enforcement }).toEqual({
      outcome: "denied",
      backend: "bwrap",
      enforcement: "full",
    });
    expect(result.detail).toBe(`bash: line 1: ${join(outside, "x")}: Read-only file system`);
    expect(readFileSync(join(sessionCwd, "in.txt"), "utf8")).toBe("in\n");
    expect(existsSync(join(outside, "x"))).toBe(false);
    for (const fork of forks) fork.dispose();
  });

  it("ctx.bashSandbox injects both services: the session's mode and cwd decide; it leaves with them", async () => {
    const ctx = new Context();
    const forks: Array<{ dispose(): unknown }> = [];
    forks.push(ctx.plugin(bashSandboxPlugin));
    await settle();
    // Injected services are missing: the consumer is not active yet.
    expect(ctx.get("bashSandbox")).toBeUndefined();
    forks.push(ctx.plugin(sandboxProviderPlugin, { backends: ["bwrap"], tempRoot }));
    forks.push(ctx.plugin(sandboxPolicyPlugin, { workspaceRoot: fallbackRoot }));
    await settle();
    const readOnly = await ctx.bashSandbox.run("pwd; echo x > ro.txt", { session: session() });
    expect({ outcome: readOnly.outcome, stdout: readOnly.stdout }).toEqual({
      outcome: "denied",
      stdout: `${sessionCwd}\n`,
    });
    expect(existsSync(join(sessionCwd, "ro.txt"))).toBe(false);
    const approved = await ctx.bashSandbox.run("echo y > rw.txt", {
      session: session(),
      mode: "workspace-write",
    });
    expect(approved.outcome).toBe("ok");
    expect(readFileSync(join(sessionCwd, "rw.txt"), "utf8")).toBe("y\n");
    // The plugin's config left protectedPaths out: the provider's defaults (.git/hooks …) still hold.
    mkdirSync(join(sessionCwd, ".git", "hooks"), { recursive: true });
    const hook = await ctx.bashSandbox.run("echo evil > .git/hooks/pre-commit", {
      session: session(),
      mode: "workspace-write",
    });
    expect(hook.outcome).toBe("denied");
    expect(existsSync(join(sessionCwd, ".git", "hooks", "pre-commit"))).toBe(false);
    forks[1]?.dispose(); // the provider plugin
    await settle();
    expect(ctx.get("sandbox")).toBeUndefined();
    expect(ctx.get("bashSandbox")).toBeUndefined();
    for (const fork of forks) fork.dispose();
  });

  it("ctx.pwshSandbox is the same consumer for PowerShell (a stand-in pwsh here), confined by bwrap", async () => {
    // pwsh is not installed on this project's machines: a stand-in runs the -Command argument with sh.
    const fakePwsh = join(scratch, "pwsh");
    writeFileSync(fakePwsh, '#!/bin/sh\nfor last; do :; done\nexec sh -c "$last"\n');
    chmodSync(fakePwsh, 0o755);
    const ctx = new Context();
    const forks = [
      ctx.plugin(sandboxProviderPlugin, { backends: ["bwrap"], tempRoot }),
      ctx.plugin(sandboxPolicyPlugin, { workspaceRoot: fallbackRoot }),
      ctx.plugin(pwshSandboxPlugin),
    ];
    await settle();
    const target = join(outside, "p");
    const run = await ctx.pwshSandbox.run(`pwd; echo x > ${target}`, { session: session(), pwsh: fakePwsh });
    expect({ outcome: run.outcome, stdout: run.stdout, backend: run.backend }).toEqual({
      outcome: "denied",
      stdout: `${sessionCwd}\n`,
      backend: "bwrap",
    });
    expect(existsSync(target)).toBe(false);
    for (const fork of forks) fork.dispose();
  });

  it("disposing the provider plugin disposes the provider: its temp areas are removed", async () => {
    const ctx = new Context();
    const fork = ctx.plugin(sandboxProviderPlugin, { backends: ["bwrap"], tempRoot });
    const policy = ctx.plugin(sandboxPolicyPlugin, {
      defaultMode: "workspace-write",
      workspaceRoot: fallbackRoot,
    });
    await settle();
    const provider = ctx.sandbox as LocalSandboxProvider;
    const confined = provider.confine(["true"], { mode: "workspace-write", workspaceRoot: fallbackRoot });
    expect(confined.env?.TMPDIR?.startsWith(`${tempRoot}/`)).toBe(true);
    expect(existsSync(confined.env?.TMPDIR ?? "")).toBe(true);
    fork.dispose();
    expect(readdirSync(tempRoot)).toEqual([]);
    expect(ctx.get("sandbox")).toBeUndefined();
    // A disposed provider fails closed.
    expect(() => provider.confine(["true"], { mode: "read-only", workspaceRoot: fallbackRoot })).toThrow(
      /SANDBOX_UNAVAILABLE/,
    );
    policy.dispose();
  });

  it("a config the schema refuses never registers the service, and the error names the field", async () => {
    // Cordis logs plugin errors; the test reads them from internal/error instead.
    const level = Logger.levels.base;
    Logger.levels.base = 0;
    try {
      const ctx = new Context();
      const errors: unknown[] = [];
      ctx.on("internal/error", (error: unknown) => {
        errors.push(error);
      });
      ctx.plugin(sandboxPolicyPlugin, { defaultMode: "everything", workspaceRoot: fallbackRoot } as never);
      await settle();
      expect(ctx.get("sandboxPolicy")).toBeUndefined();
      expect(errors.map(String)).toEqual([
        'ValidationError: $.defaultMode expected "read-only" | "workspace-write" | "danger-full-access" but got "everything"',
      ]);
    } finally {
      Logger.levels.base = level;
    }
  });
});
