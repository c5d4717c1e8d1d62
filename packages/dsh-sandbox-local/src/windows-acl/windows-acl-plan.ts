import { createHash, randomBytes } from "node:crypto";
import type { LocalConfinePolicy } from "../backend/local-backend.js";

/** Well-known SIDs used by the plan. */
export const WELL_KNOWN_SIDS = Object.freeze({
  /** Everyone (World). */
  everyone: "S-1-1-0",
  /** RESTRICTED: present in every restricted token's restricting SIDs. */
  restricted: "S-1-5-12",
});

/** One ACE the launcher adds before spawning (and removes when the session ends). */
export interface WindowsAclEntry {
  /** Absolute path the ACE is set on. */
  path: string;
  /** The SID the ACE names. */
  sid: string;
  /** `modify` grants write/delete (inherited by children); `deny-write` denies every write right. */
  access: "modify" | "deny-write";
  /** Whether the ACE is inherited by files and directories below `path`. */
  inherit: boolean;
}

/** What {@link planWindowsAcl} asks the restricted-token launcher to do. */
export interface WindowsAclPlan {
  /** The restricted token the command runs with. */
  restrictedToken: {
    /** `CreateRestrictedToken(DISABLE_MAX_PRIVILEGE)`: every privilege but SeChangeNotify removed. */
    disableMaxPrivilege: true;
    /** Restricting SIDs: a write succeeds only where the ACL grants one of these too. */
    restrictingSids: readonly string[];
  };
  /** Per-workspace SID (derived from the canonical root, stable across sessions); absent under `read-only`. */
  workspaceSid: string | undefined;
  /** Per live session/workspace pair SID (random), or per call for agentless calls. */
  sessionSid: string;
  /** Directories the plan makes writable (the workspace and the private temp area). Empty under `read-only`. */
  writableRoots: readonly string[];
  /** ACEs granting writes. */
  grants: readonly WindowsAclEntry[];
  /** ACEs denying writes to protected sub-paths. */
  denies: readonly WindowsAclEntry[];
  /** What this plan cannot govern (why enforcement is `partial`). */
  gaps: readonly string[];
  /** Always `partial`: see {@link gaps}. */
  enforcement: "partial";
}

/** The gaps every restricted-token plan has. */
export const WINDOWS_ACL_GAPS: readonly string[] = Object.freeze([
  "Everyone-writable locations stay writable: reads need Everyone (S-1-1-0) among the restricting SIDs, so any file or directory whose ACL grants Everyone write access can still be changed",
  "hard links: a hard link inside a writable root to a file outside shares that file's ACL, so a link that already exists there (or a new one to an Everyone-writable file) reaches outside the workspace",
]);

/** Format 32 bytes as a capability-style SID `S-1-15-3-1024-a-b-c-d-e-f-g-h`. */
function sidFromBytes(bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const parts: number[] = [];
  for (let i = 0; i < 8; i++) parts.push(view.getUint32(i * 4, true));
  return `S-1-15-3-1024-${parts.join("-")}`;
}

/** The stable SID of a workspace: SHA-256 of its canonical root (case-folded, as NTFS paths are). */
export function workspaceSidOf(workspaceRoot: string): string {
  return sidFromBytes(
    createHash("sha256").update(`suaveplan-workspace:${workspaceRoot.toLowerCase()}`).digest(),
  );
}

/** A fresh random SID for one session/workspace pair (or one agentless call). */
export function randomSessionSid(random: (size: number) => Uint8Array = randomBytes): string {
  return sidFromBytes(random(32));
}

/**
 * Plan the restricted token and ACL changes for `policy`. Under
 * `workspace-write` the workspace SID gets `modify` on the workspace, the
 * session SID on the private temp area, and protected sub-paths get a
 * `deny-write` ACE for both; under `read-only` nothing is granted (the plan
 * still has the ambient gaps, so enforcement stays `partial`).
 */
export function planWindowsAcl(
  policy: Pick<LocalConfinePolicy, "mode" | "workspaceRoot" | "tempDir" | "protectedPaths">,
  sessionSid: string,
): WindowsAclPlan {
  const write = policy.mode === "workspace-write";
  const workspaceSid = write ? workspaceSidOf(policy.workspaceRoot) : undefined;
  const grants: WindowsAclEntry[] = [];
  const denies: WindowsAclEntry[] = [];
  const writableRoots: string[] = [];
  if (workspaceSid !== undefined) {
    writableRoots.push(policy.workspaceRoot);
    grants.push({ path: policy.workspaceRoot, sid: workspaceSid, access: "modify", inherit: true });
    if (policy.tempDir !== undefined) {
      writableRoots.push(policy.tempDir);
      grants.push({ path: policy.tempDir, sid: sessionSid, access: "modify", inherit: true });
    }
    for (const path of policy.protectedPaths) {
      denies.push({ path, sid: workspaceSid, access: "deny-write", inherit: true });
      denies.push({ path, sid: sessionSid, access: "deny-write", inherit: true });
    }
  }
  const restrictingSids = [WELL_KNOWN_SIDS.everyone, WELL_KNOWN_SIDS.restricted, sessionSid];
  if (workspaceSid !== undefined) restrictingSids.push(workspaceSid);
  const gaps = write
    ? [...WINDOWS_ACL_GAPS]
    : ["read-only grants no explicit writable root, but the ambient gaps remain", ...WINDOWS_ACL_GAPS];
  return {
    restrictedToken: { disableMaxPrivilege: true, restrictingSids },
    workspaceSid,
    sessionSid,
    writableRoots,
    grants,
    denies,
    gaps,
    enforcement: "partial",
  };
}
