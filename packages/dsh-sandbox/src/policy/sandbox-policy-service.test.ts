import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SandboxPolicyError } from "../provider/sandbox-errors.js";
import { SandboxPolicyService } from "./sandbox-policy-service.js";
import type { Session } from "./sandbox-policy-types.js";

let base: string;
let configured: string;
let sessionDir: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-policy-")));
  configured = join(base, "configured");
  sessionDir = join(base, "session");
  mkdirSync(configured);
  mkdirSync(join(sessionDir, "nested"), { recursive: true });
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function errorOf(fn: () => unknown): SandboxPolicyError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SandboxPolicyError) return error;
    throw error;
  }
  throw new Error("expected a SandboxPolicyError");
}

function session(events: Session["events"], cwd?: string): Session {
  return cwd === undefined ? { id: "s-1", events } : { id: "s-1", cwd, events };
}

describe("SandboxPolicyService", () => {
  it("falls back to the default mode and the configured root for agentless calls", () => {
    const service = new SandboxPolicyService({ defaultMode: "read-only", workspaceRoot: configured });
    expect(service.resolve()).toEqual({ mode: "read-only", workspaceRoot: configured });
    expect(service.resolve({})).toEqual({ mode: "read-only", workspaceRoot: configured });
  });

  it("uses the session's last sandbox/mode event over the default", () => {
    const service = new SandboxPolicyService({ defaultMode: "read-only", workspaceRoot: configured });
    const s = session(
      [
        { type: "sandbox/mode", mode: "danger-full-access" },
        { type: "chat" },
        { type: "sandbox/mode", mode: "workspace-write" },
        { type: "chat" },
      ],
      sessionDir,
    );
    expect(service.overrideOf(s)).toBe("workspace-write");
    expect(service.resolve({ session: s })).toEqual({
      mode: "workspace-write",
      workspaceRoot: sessionDir,
      sessionId: "s-1",
    });
  });

  it("an explicit mode outranks the session's override", () => {
    const service = new SandboxPolicyService({ defaultMode: "workspace-write", workspaceRoot: configured });
    const s = session([{ type: "sandbox/mode", mode: "read-only" }], sessionDir);
    expect(service.resolve({ session: s, mode: "danger-full-access" })).toEqual({
      mode: "danger-full-access",
      workspaceRoot: sessionDir,
      sessionId: "s-1",
    });
  });

  it("overrideOf returns undefined without a sandbox/mode event", () => {
    const service = new SandboxPolicyService({ defaultMode: "read-only", workspaceRoot: configured });
    expect(service.overrideOf(session([{ type: "chat" }]))).toBeUndefined();
    expect(service.resolve({ session: session([{ type: "chat" }]) })).toEqual({
      mode: "read-only",
      workspaceRoot: configured,
      sessionId: "s-1",
    });
  });

  it("canonicalises a session cwd through symlinks and .. before normalising", () => {
    symlinkSync(sessionDir, join(base, "link"));
    const service = new SandboxPolicyService({ defaultMode: "read-only", workspaceRoot: configured });
    const cwd = `${join(base, "link", "nested")}/../`;
    expect(service.resolve({ session: session([], cwd) }).workspaceRoot).toBe(sessionDir);
  });

  it("canonicalises the configured root too", () => {
    symlinkSync(configured, join(base, "configured-link"));
    const service = new SandboxPolicyService({
      defaultMode: "read-only",
      workspaceRoot: join(base, "configured-link"),
    });
    expect(service.resolve().workspaceRoot).toBe(configured);
  });

  it("rejects bad constructor options naming the field", () => {
    expect(
      errorOf(() => new SandboxPolicyService({ defaultMode: "rw" as never, workspaceRoot: configured }))
        .message,
    ).toBe(
      'defaultMode must be one of "read-only", "workspace-write", "danger-full-access", got "rw" (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
    );
    expect(
      errorOf(() => new SandboxPolicyService({ defaultMode: "read-only", workspaceRoot: "rel" })).message,
    ).toBe(
      'workspaceRoot must be a non-empty absolute path, got "rel" (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
    );
  });

  it("rejects a bad request mode, session and event mode naming the field", () => {
    const service = new SandboxPolicyService({ defaultMode: "read-only", workspaceRoot: configured });
    expect(errorOf(() => service.resolve({ mode: 3 as never })).message).toBe(
      'mode must be one of "read-only", "workspace-write", "danger-full-access", got number (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
    );
    expect(errorOf(() => service.resolve({ session: session([], "relative/dir") })).message).toBe(
      'session.cwd must be a non-empty absolute path, got "relative/dir" (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
    );
    expect(errorOf(() => service.resolve({ session: { id: 1, events: [] } as never })).message).toBe(
      "session.id must be a string, got number (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
    );
    expect(
      errorOf(() => service.overrideOf(session([{ type: "sandbox/mode", mode: "all" as never }]))).message,
    ).toBe(
      'session.events[0].mode must be one of "read-only", "workspace-write", "danger-full-access", got "all" (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md',
    );
  });

  it("rejects a root that does not exist or is not a directory, without naming the host path", () => {
    const service = new SandboxPolicyService({
      defaultMode: "read-only",
      workspaceRoot: join(base, "missing"),
    });
    const missing = errorOf(() => service.resolve());
    expect(missing.message).toBe(
      "workspaceRoot cannot be canonicalised: the directory does not resolve (ENOENT) (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
    );
    expect(missing.details).toEqual({ field: "workspaceRoot", errno: "ENOENT" });
    writeFileSync(join(base, "file"), "x");
    expect(errorOf(() => service.resolve({ session: session([], join(base, "file")) })).message).toBe(
      "session.cwd must name a directory, but it resolves to a non-directory (SANDBOX_INVALID_POLICY); see @suaveplan/dsh-sandbox/docs/errors/SANDBOX_INVALID_POLICY.md",
    );
  });
});
