import { lstatSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, normalize, relative, sep } from "node:path";
import { SandboxPolicyError, SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { DeniedRead } from "../backend/local-backend.js";
import { expandGlob, GlobBudgetExceeded, isGlob } from "../internal/glob-paths.js";
import { isWithin } from "../internal/paths.js";

/**
 * Workspace-relative paths kept read-only under `workspace-write` unless
 * configured otherwise: VCS metadata that runs code (`.git/hooks`,
 * `.git/config` — `core.fsmonitor`, `core.pager`, aliases —, `.gitmodules`,
 * and the same for submodules under `.git/modules`), agent and editor
 * configuration that runs code (`.codex`, `.claude`, `.mcp.json`, `.vscode`,
 * `.idea`), direnv's `.envrc`, and shell start-up files. Glob patterns allowed.
 */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = Object.freeze([
  ".git/hooks",
  ".git/config",
  ".git/modules/**/hooks",
  ".git/modules/**/config",
  ".gitmodules",
  ".codex",
  ".claude",
  ".mcp.json",
  ".vscode",
  ".idea",
  ".envrc",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".profile",
  ".zshrc",
  ".zshenv",
  ".zprofile",
  ".zlogin",
  ".gitconfig",
]);

/**
 * An opt-in `denyRead` preset: secrets in the caller's home — SSH keys,
 * cloud credentials (AWS, Google Cloud, Azure, Docker, Kubernetes), netrc and
 * npm/yarn/pip tokens, GnuPG, the GitHub CLI's token, and shell histories.
 * `~/` is the caller's home directory when `confine` runs.
 */
export const SECRETS_DENY_READ: readonly string[] = Object.freeze([
  "~/.ssh",
  "~/.aws",
  "~/.config/gcloud",
  "~/.azure",
  "~/.docker/config.json",
  "~/.kube",
  "~/.gnupg",
  "~/.config/gh",
  "~/.netrc",
  "~/.npmrc",
  "~/.yarnrc",
  "~/.pypirc",
  "~/.git-credentials",
  "~/.bash_history",
  "~/.zsh_history",
  "~/.sh_history",
  "~/.python_history",
  "~/.node_repl_history",
  "~/.psql_history",
  "~/.mysql_history",
  "~/.local/share/fish/fish_history",
]);

/** Check the shape of a path-list option; `field` names it in the error. */
export function checkPathList(
  value: unknown,
  field: string,
  kind: "absolute" | "absolute-or-home" | "relative",
  fail: (message: string) => Error,
): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw fail(`${field} must be an array of paths`);
  for (const [i, entry] of value.entries()) {
    if (typeof entry !== "string" || entry === "" || entry.includes("\0")) {
      throw fail(`${field}[${i}] must be a non-empty path without NUL bytes`);
    }
    if (kind === "relative") {
      if (isAbsolute(entry) || normalize(entry).split(sep).includes("..")) {
        throw fail(`${field}[${i}] must be a relative path inside the workspace (no "..")`);
      }
    } else if (!isAbsolute(entry) && !(kind === "absolute-or-home" && entry.startsWith("~/"))) {
      throw fail(
        `${field}[${i}] must be an absolute path${kind === "absolute-or-home" ? ' or start with "~/"' : ""}`,
      );
    }
  }
  return value as readonly string[];
}

/** Canonical extra writable roots: each must resolve (symlinks followed) to a directory. */
export function canonicalWritableRoots(roots: readonly string[], field: string): string[] {
  const out: string[] = [];
  for (const [i, root] of roots.entries()) {
    let real: string;
    try {
      real = normalize(realpathSync.native(root));
    } catch (error) {
      throw new SandboxPolicyError(
        `${field}[${i}] does not resolve to a directory (${(error as NodeJS.ErrnoException).code ?? "error"}); create it first`,
        { cause: error },
      );
    }
    if (!statSync(real).isDirectory()) {
      throw new SandboxPolicyError(
        `${field}[${i}] must name a directory, but it resolves to a non-directory`,
      );
    }
    if (real === "/")
      throw new SandboxPolicyError(`${field}[${i}] must not be "/" (that is danger-full-access)`);
    if (!out.includes(real)) out.push(real);
  }
  return out;
}

/**
 * The protected paths that exist now under each writable root, canonical.
 * A protected path that is itself a symbolic link fails closed
 * (`SANDBOX_UNAVAILABLE` naming it): the link could be re-pointed, and bind
 * mounts follow it. One whose canonical target lies outside every writable
 * root is read-only anyway and is not listed. One that does not exist is not
 * protected: the command may create it, and it is protected from the next call on.
 */
export function resolveProtectedPaths(
  patterns: readonly string[],
  writableRoots: readonly string[],
): string[] {
  const out = new Set<string>();
  for (const root of writableRoots) {
    for (const pattern of patterns) {
      const absolute = join(root, pattern);
      for (const path of matches(absolute, `protectedPaths entry ${JSON.stringify(pattern)}`)) {
        let stat: ReturnType<typeof lstatSync>;
        try {
          stat = lstatSync(path);
        } catch {
          continue; // removed meanwhile
        }
        if (stat.isSymbolicLink()) {
          throw new SandboxUnavailableError(
            `protected path ${JSON.stringify(relative(root, path))} is a symbolic link; refusing to confine (a link can be re-pointed, and a read-only bind follows it). Replace the link with the real file or directory, or drop it from protectedPaths`,
          );
        }
        let real: string;
        try {
          real = realpathSync.native(path);
        } catch {
          continue;
        }
        if (real !== root && writableRoots.some((r) => isWithin(r, real))) out.add(real);
      }
    }
  }
  return [...out];
}

/**
 * Expand `denyRead` entries (absolute paths, `~/…`, globs) to the canonical
 * paths that exist now, each with its kind. Entries that match nothing are
 * skipped (there is nothing to read). A denied path that contains a writable
 * root or the workspace is refused: hiding it would hide the workspace.
 */
export function resolveDenyRead(
  entries: readonly string[],
  workspaceRoot: string,
  writableRoots: readonly string[],
  home: string = homedir(),
): DeniedRead[] {
  const out = new Map<string, DeniedRead>();
  for (const entry of entries) {
    const absolute = entry.startsWith("~/") ? join(home, entry.slice(2)) : entry;
    for (const path of matches(absolute, `denyRead entry ${JSON.stringify(entry)}`)) {
      let real: string;
      try {
        real = realpathSync.native(path);
      } catch {
        continue; // dangling link: nothing to read
      }
      if ([workspaceRoot, ...writableRoots].some((root) => isWithin(real, root))) {
        throw new SandboxPolicyError(
          `denyRead entry ${JSON.stringify(entry)} contains the workspace or a writable root; hiding it would hide them. Deny narrower paths`,
        );
      }
      let directory: boolean;
      try {
        directory = statSync(real).isDirectory();
      } catch {
        continue;
      }
      out.set(real, { path: real, directory });
    }
  }
  return [...out.values()].sort((a, b) => a.path.localeCompare(b.path));
}

function matches(absolute: string, what: string): string[] {
  if (!isGlob(absolute)) {
    try {
      lstatSync(absolute);
      return [absolute];
    } catch {
      return [];
    }
  }
  try {
    return expandGlob(absolute);
  } catch (error) {
    if (error instanceof GlobBudgetExceeded) {
      throw new SandboxUnavailableError(
        `${what} visits more than 10000 directories; refusing to confine with a rule that cannot be resolved. Use a narrower pattern`,
      );
    }
    throw error;
  }
}
