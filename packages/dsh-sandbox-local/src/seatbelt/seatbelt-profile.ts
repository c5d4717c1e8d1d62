import type { LocalConfinePolicy } from "../backend/local-backend.js";

/** A generated Seatbelt profile and the `-D KEY=VALUE` parameters it reads. */
export interface SeatbeltProfile {
  /** SBPL text passed with `sandbox-exec -p`. Paths never appear in it: they arrive as parameters. */
  profile: string;
  /** Parameters passed as `-D KEY=VALUE` (canonical absolute paths). */
  params: Readonly<Record<string, string>>;
}

/**
 * Build the SBPL profile for `policy`: everything is allowed except file
 * writes; file writes are denied unless they target `/dev/null` or — under
 * `workspace-write` — lie beneath the workspace root or the private temp area;
 * protected sub-paths are denied even there. `network: "deny"` also denies
 * `network*`. Paths are passed as `(param "…")` values, never spliced into the
 * profile, so no path can inject SBPL.
 */
export function buildSeatbeltProfile(
  policy: Pick<LocalConfinePolicy, "mode" | "workspaceRoot" | "tempDir" | "protectedPaths" | "network">,
): SeatbeltProfile {
  const params: Record<string, string> = {};
  const writable: string[] = ['(literal "/dev/null")'];
  if (policy.mode === "workspace-write") {
    params.WORKSPACE_ROOT = policy.workspaceRoot;
    writable.push('(subpath (param "WORKSPACE_ROOT"))');
    if (policy.tempDir !== undefined) {
      params.TEMP_DIR = policy.tempDir;
      writable.push('(subpath (param "TEMP_DIR"))');
    }
  }
  const lines = [
    "(version 1)",
    "(allow default)",
    `(deny file-write* (require-not (require-any ${writable.join(" ")})))`,
  ];
  if (policy.mode === "workspace-write") {
    policy.protectedPaths.forEach((path, i) => {
      params[`PROTECTED_${i}`] = path;
      lines.push(`(deny file-write* (subpath (param "PROTECTED_${i}")))`);
    });
  }
  if (policy.network === "deny") lines.push("(deny network*)");
  return { profile: `${lines.join("\n")}\n`, params };
}
