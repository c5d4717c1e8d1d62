import { describe, expect, it } from "vitest";
import { createFakeHost } from "../../test/support/fake-host.js";
import type { LocalConfinePolicy } from "../backend/local-backend.js";
import { createWindowsAclBackend } from "./windows-acl-backend.js";
import { planWindowsAcl, WINDOWS_ACL_GAPS, workspaceSidOf } from "./windows-acl-plan.js";

const write: LocalConfinePolicy = {
  mode: "workspace-write",
  workspaceRoot: "C:\\work\\project",
  tempDir: "C:\\Users\\me\\AppData\\Local\\Temp\\suaveplan-sbx-1",
  protectedPaths: ["C:\\work\\project\\.git\\hooks"],
  network: "allow",
};
const SESSION_SID = "S-1-15-3-1024-1-2-3-4-5-6-7-8";

describe("planWindowsAcl", () => {
  it("workspace-write: workspace SID modifies the workspace, session SID the temp area, protected paths deny-write", () => {
    const wsSid = workspaceSidOf("C:\\work\\project");
    expect(planWindowsAcl(write, SESSION_SID)).toEqual({
      restrictedToken: {
        disableMaxPrivilege: true,
        restrictingSids: ["S-1-1-0", "S-1-5-12", SESSION_SID, wsSid],
      },
      workspaceSid: wsSid,
      sessionSid: SESSION_SID,
      writableRoots: ["C:\\work\\project", "C:\\Users\\me\\AppData\\Local\\Temp\\suaveplan-sbx-1"],
      grants: [
        { path: "C:\\work\\project", sid: wsSid, access: "modify", inherit: true },
        {
          path: "C:\\Users\\me\\AppData\\Local\\Temp\\suaveplan-sbx-1",
          sid: SESSION_SID,
          access: "modify",
          inherit: true,
        },
      ],
      denies: [
        { path: "C:\\work\\project\\.git\\hooks", sid: wsSid, access: "deny-write", inherit: true },
        { path: "C:\\work\\project\\.git\\hooks", sid: SESSION_SID, access: "deny-write", inherit: true },
      ],
      gaps: [...WINDOWS_ACL_GAPS],
      enforcement: "partial",
    });
  });

  it("read-only: grants no explicit writable root and still reports partial enforcement", () => {
    expect(planWindowsAcl({ ...write, mode: "read-only", tempDir: undefined }, SESSION_SID)).toEqual({
      restrictedToken: { disableMaxPrivilege: true, restrictingSids: ["S-1-1-0", "S-1-5-12", SESSION_SID] },
      workspaceSid: undefined,
      sessionSid: SESSION_SID,
      writableRoots: [],
      grants: [],
      denies: [],
      gaps: ["read-only grants no explicit writable root, but the ambient gaps remain", ...WINDOWS_ACL_GAPS],
      enforcement: "partial",
    });
  });

  it("derives a stable, case-insensitive workspace SID", () => {
    const sid = workspaceSidOf("C:\\Work\\Project");
    expect(sid).toBe(workspaceSidOf("c:\\work\\project"));
    expect(sid).toMatch(/^S-1-15-3-1024(-\d+){8}$/);
    expect(sid).not.toBe(workspaceSidOf("C:\\work\\other"));
  });
});

describe("windows-acl backend", () => {
  it("reports why not off Windows, and without a launcher on Windows", () => {
    expect(createWindowsAclBackend({ host: createFakeHost({ platform: "linux" }) }).probe()).toEqual({
      backend: "windows-acl",
      available: false,
      reason: "the restricted-token ACL backend runs only on Windows; this host is linux",
    });
    expect(createWindowsAclBackend({ host: createFakeHost({ platform: "win32" }) }).probe().reason).toBe(
      "no restricted-token launcher is configured (windowsLauncherPath); this package ships the ACL plan, not the launcher",
    );
  });

  it("keeps one session SID per live session/workspace pair and a fresh one per agentless call", () => {
    let n = 0;
    const random = (size: number): Uint8Array => new Uint8Array(size).fill(++n);
    const host = createFakeHost({ platform: "win32" });
    const backend = createWindowsAclBackend({ host, launcherPath: "C:\\acl-launcher.exe", random });
    const probe = backend.probe();
    expect({ available: probe.available, enforcement: probe.enforcement }).toEqual({
      available: true,
      enforcement: "partial",
    });
    const sidOf = (policy: LocalConfinePolicy): string => {
      const argv = backend.wrap(["cmd"], policy, probe).argv;
      return (JSON.parse(argv[2] as string) as { sessionSid: string }).sessionSid;
    };
    const s1 = sidOf({ ...write, sessionId: "a" });
    expect(sidOf({ ...write, sessionId: "a" })).toBe(s1);
    expect(sidOf({ ...write, sessionId: "b" })).not.toBe(s1);
    expect(sidOf({ ...write, sessionId: "a", workspaceRoot: "C:\\other" })).not.toBe(s1);
    expect(sidOf(write)).not.toBe(sidOf(write));
  });

  it("wraps argv as <launcher> --plan <json> -- argv with TMP/TEMP/TMPDIR and partial enforcement", () => {
    const host = createFakeHost({ platform: "win32" });
    const backend = createWindowsAclBackend({
      host,
      launcherPath: "C:\\acl-launcher.exe",
      random: (size) => new Uint8Array(size),
    });
    const confined = backend.wrap(["pwsh", "-c", "dir"], write, backend.probe());
    const plan = planWindowsAcl(write, "S-1-15-3-1024-0-0-0-0-0-0-0-0");
    expect(confined).toEqual({
      argv: ["C:\\acl-launcher.exe", "--plan", JSON.stringify(plan), "--", "pwsh", "-c", "dir"],
      enforcement: "partial",
      denialSignatures: ["Access is denied"],
      runnerFailureRules: [{ fatalSignatures: ["suaveplan-acl-launcher: "] }],
      backend: "windows-acl",
      network: "allow",
      env: { TMP: write.tempDir, TEMP: write.tempDir, TMPDIR: write.tempDir },
    });
  });
});
