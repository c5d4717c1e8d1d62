import { type Dirent, readdirSync, readlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";
import type { DeniedRead } from "../backend/local-backend.js";
import { isWithin } from "./paths.js";

/** The most entries a denied file's directory may hold (each is one mount in the sandbox). */
export const MAX_DENIED_FILE_SIBLINGS = 4096;

/** bwrap arguments that hide `denyRead` paths, in two groups placed apart. */
export interface DenyReadMounts {
  /**
   * Give right after the base mounts, before every writable and protected
   * bind: the parent directory of each denied path becomes an empty tmpfs
   * holding that directory's other entries (read-only binds, symbolic links
   * re-made), a `/dev/null` bind in place of each denied file and an empty
   * directory in place of each denied directory, then is remounted read-only.
   * The writable and protected binds given later land on top.
   */
  fileDirectories: string[];
  /**
   * Give after every writable and protected bind: a read-only empty tmpfs over
   * each denied directory that lies in a writable root or in `/` (its own
   * parent cannot be masked).
   */
  directories: string[];
}

/**
 * Plan the masks of `denied` (canonical paths existing now). A mount on a path
 * follows that path's inode: when the host replaces a file by rename (an
 * editor, a credential refresher, any atomic writer) or a directory by a new
 * one, the kernel detaches the mount and the command reads the new contents.
 * So a denied path is masked through its parent directory (a tmpfs the host
 * cannot reach), whose other entries, as they are now, are bound back in —
 * entries the host adds to that directory later do not appear in the sandbox.
 * A denied directory in a writable root or in `/` gets a tmpfs of its own.
 *
 * Refuses (`SandboxUnavailableError`) a denied file in `/`, in a writable root
 * (a tmpfs there would swallow the command's writes) or in a directory that
 * cannot be listed or holds more than {@link MAX_DENIED_FILE_SIBLINGS} entries;
 * the message names the directory to deny instead.
 */
export function denyReadMounts(
  denied: readonly DeniedRead[],
  writableRoots: readonly string[],
): DenyReadMounts {
  const deniedDirectories = denied.filter((d) => d.directory).map((d) => d.path);
  const byDirectory = new Map<string, Map<string, boolean>>();
  const directMasks: string[] = [];
  for (const { path, directory } of denied) {
    if (deniedDirectories.some((d) => d !== path && isWithin(d, path))) continue; // hidden with its directory
    const parent = dirname(path);
    const root = writableRoots.find((r) => isWithin(r, parent));
    if (directory && (path === "/" || parent === "/" || root !== undefined)) {
      // A tmpfs on the directory itself: it holds unless the host deletes or renames the directory away.
      directMasks.push(path);
      continue;
    }
    if (parent === "/" || root !== undefined) {
      throw new SandboxUnavailableError(
        `denyRead cannot hide the file ${JSON.stringify(path)} reliably: ${parent === "/" ? 'it lies in "/"' : "it lies in a writable root"}, and a mask on the file itself is lost when the host replaces the file by rename (editors and credential refreshers do). ${parent !== "/" && parent !== root ? `Deny its directory ${JSON.stringify(parent)} instead` : "Deny a directory that holds it instead"}, or keep the file out of the writable roots`,
      );
    }
    const names = byDirectory.get(parent) ?? new Map<string, boolean>();
    names.set(path.slice(parent.length + 1), directory);
    byDirectory.set(parent, names);
  }
  const fileDirectories: string[] = [];
  for (const parent of [...byDirectory.keys()].sort((a, b) => depth(a) - depth(b))) {
    const hidden = byDirectory.get(parent) ?? new Map<string, boolean>();
    let entries: Dirent[] | undefined;
    let problem: string | undefined;
    let cause: unknown;
    try {
      entries = readdirSync(parent, { withFileTypes: true });
      if (entries.length > MAX_DENIED_FILE_SIBLINGS) {
        problem = `it holds ${entries.length} entries, more than ${MAX_DENIED_FILE_SIBLINGS} (each is kept by one mount)`;
      }
    } catch (error) {
      cause = error;
      problem = `it cannot be listed (${(error as NodeJS.ErrnoException).code ?? "error"})`;
    }
    if (entries === undefined || problem !== undefined) {
      const files = [...hidden].filter(([, directory]) => !directory).map(([name]) => join(parent, name));
      if (files.length > 0) {
        throw new SandboxUnavailableError(
          `denyRead cannot hide the file ${JSON.stringify(files[0])} reliably: its directory must be masked and its other entries kept, but ${problem}. Deny the directory ${JSON.stringify(parent)} instead`,
          ...(cause !== undefined ? [{ cause }] : []),
        );
      }
      for (const name of hidden.keys()) directMasks.push(join(parent, name));
      continue;
    }
    fileDirectories.push("--tmpfs", parent);
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (hidden.has(entry.name)) continue;
      const path = join(parent, entry.name);
      if (entry.isSymbolicLink()) {
        let target: string;
        try {
          target = readlinkSync(path);
        } catch {
          continue; // removed meanwhile
        }
        fileDirectories.push("--symlink", target, path);
      } else fileDirectories.push("--ro-bind-try", path, path);
    }
    // In place of each denied file, /dev/null bound read-only (bwrap binds
    // nodev: opening it fails with EACCES); of each denied directory, an empty
    // one — entries of a tmpfs the host cannot replace.
    for (const name of [...hidden.keys()].sort()) {
      const path = join(parent, name);
      if (hidden.get(name) === true) fileDirectories.push("--dir", path);
      else fileDirectories.push("--ro-bind", "/dev/null", path);
    }
    fileDirectories.push("--remount-ro", parent);
  }
  const directories = directMasks
    .sort((a, b) => depth(a) - depth(b))
    .flatMap((path) => ["--tmpfs", path, "--remount-ro", path]);
  return { fileDirectories, directories };
}

function depth(path: string): number {
  return path.split("/").length;
}
