import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

/**
 * A throw-away directory tree for one escape test, created under
 * `os.tmpdir()` and canonicalised:
 *
 * ```
 * root/
 *   workspace/            the policy's workspaceRoot
 *     sub/file.txt
 *     .git/hooks/pre-commit, .git/config   (protected sub-paths)
 *     link-out -> ../outside               (a host-made symlink out)
 *   workspace-link -> workspace            (the workspace through a symlink)
 *   outside/              must never change
 *     secret.txt, dir/
 * /dev/shm/suaveplan-escape-<id>           a host /dev/shm file that must not change
 * ```
 */
export interface EscapeLayout {
  root: string;
  workspace: string;
  workspaceLink: string;
  outside: string;
  secret: string;
  outsideDir: string;
  gitDir: string;
  hooks: string;
  hook: string;
  gitConfig: string;
  linkOut: string;
  shmFile: string;
  shmNew: string;
  /** Remove everything this layout created (idempotent). */
  cleanup(): void;
}

export const SECRET_TEXT = "original secret\n";
export const HOOK_TEXT = "#!/bin/sh\nexit 0\n";
export const GIT_CONFIG_TEXT = "[core]\n\trepositoryformatversion = 0\n";
export const SHM_TEXT = "original shm\n";

/** Create a fresh {@link EscapeLayout}. */
export function createEscapeLayout(prefix = "suaveplan-escape-"): EscapeLayout {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const workspace = join(root, "workspace");
  const outside = join(root, "outside");
  const gitDir = join(workspace, ".git");
  const hooks = join(gitDir, "hooks");
  mkdirSync(join(workspace, "sub"), { recursive: true });
  mkdirSync(hooks, { recursive: true });
  mkdirSync(join(outside, "dir"), { recursive: true });
  writeFileSync(join(workspace, "sub", "file.txt"), "workspace file\n");
  writeFileSync(join(hooks, "pre-commit"), HOOK_TEXT, { mode: 0o755 });
  writeFileSync(join(gitDir, "config"), GIT_CONFIG_TEXT);
  writeFileSync(join(outside, "secret.txt"), SECRET_TEXT, { mode: 0o644 });
  symlinkSync(outside, join(workspace, "link-out"));
  symlinkSync(workspace, join(root, "workspace-link"));
  const id = randomBytes(6).toString("hex");
  const shmFile = `/dev/shm/suaveplan-escape-${id}`;
  const shmNew = `/dev/shm/suaveplan-escape-${id}-new`;
  const haveShm = existsSync("/dev/shm");
  if (haveShm) writeFileSync(shmFile, SHM_TEXT);
  let cleaned = false;
  return {
    root,
    workspace,
    workspaceLink: join(root, "workspace-link"),
    outside,
    secret: join(outside, "secret.txt"),
    outsideDir: join(outside, "dir"),
    gitDir,
    hooks,
    hook: join(hooks, "pre-commit"),
    gitConfig: join(gitDir, "config"),
    linkOut: join(workspace, "link-out"),
    shmFile,
    shmNew,
    cleanup() {
      if (cleaned) return;
      cleaned = true;
      rmSync(root, { recursive: true, force: true });
      rmSync(shmFile, { force: true });
      rmSync(shmNew, { force: true });
    },
  };
}

/** One entry of {@link snapshotTree}: everything a write, rename, link, chmod or touch would change. */
export interface TreeEntry {
  path: string;
  type: "file" | "dir" | "symlink" | "other";
  mode: number;
  uid: number;
  gid: number;
  size: number;
  ino: number;
  nlink: number;
  mtimeMs: number;
  ctimeMs: number;
  content?: string;
  target?: string;
}

/**
 * Host-side snapshot of `path` (file or directory tree, symlinks not
 * followed). Two equal snapshots mean nothing under `path` was written,
 * truncated, created, removed, renamed, linked, chmod-ed or touched.
 */
export function snapshotTree(path: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  const visit = (current: string): void => {
    const st = lstatSync(current);
    const type = st.isFile() ? "file" : st.isDirectory() ? "dir" : st.isSymbolicLink() ? "symlink" : "other";
    const entry: TreeEntry = {
      path: relative(path, current) || ".",
      type,
      mode: st.mode,
      uid: st.uid,
      gid: st.gid,
      size: st.size,
      ino: st.ino,
      nlink: st.nlink,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
    };
    if (type === "file") entry.content = readFileSync(current, "utf8");
    if (type === "symlink") entry.target = readlinkSync(current);
    entries.push(entry);
    if (type === "dir") for (const name of readdirSync(current).sort()) visit(join(current, name));
  };
  visit(path);
  return entries;
}

/** A host process whose cwd is `cwd` (for the `/proc/<pid>/cwd` attack); kill it with `stop()`. */
export function startHostProcess(cwd: string): { pid: number; stop(): void } {
  const child = spawn("sleep", ["120"], { cwd, stdio: "ignore" });
  if (child.pid === undefined) throw new Error("could not start the host helper process");
  return {
    pid: child.pid,
    stop() {
      child.kill("SIGKILL");
    },
  };
}

/** Quote `value` for a POSIX shell. */
export function sh(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
