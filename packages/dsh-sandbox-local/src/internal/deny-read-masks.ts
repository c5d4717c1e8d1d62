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
   * bind: the directory of each denied file becomes an empty tmpfs holding
   * that directory's other entries (read-only binds, symbolic links re-made)
   * and a `/dev/null` bind in place of each denied file, then is remounted
   * read-only. The writable and protected binds given later land on top.
   */
  fileDirectories: string[];
  /**
   * Give after every writable and protected bind: a read-only empty tmpfs over
   * each denied directory (it lists as empty).
   */
  directories: string[];
}

/**
 * Plan the masks of `denied` (canonical paths existing now). A mount on a file
 * follows that file's inode: when the host replaces the file by rename (an
 * editor, a credential refresher, any atomic writer), the kernel detaches the
 * mount and the command reads the new contents. So a file is never masked by
 * itself: its directory is (a tmpfs the host cannot reach), and the file's
 * siblings, as they are now, are bound back in — entries the host adds to that
 * directory later do not appear in the sandbox.
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
  const byDirectory = new Map<string, string[]>();
  for (const { path, directory } of denied) {
    if (directory || deniedDirectories.some((d) => isWithin(d, path))) continue;
    const parent = dirname(path);
    const root = writableRoots.find((r) => isWithin(r, parent));
    if (parent === "/" || root !== undefined) {
      throw new SandboxUnavailableError(
        `denyRead cannot hide the file ${JSON.stringify(path)} reliably: ${parent === "/" ? 'it lies in "/"' : "it lies in a writable root"}, and a mask on the file itself is lost when the host replaces the file by rename (editors and credential refreshers do). ${parent !== "/" && parent !== root ? `Deny its directory ${JSON.stringify(parent)} instead` : "Deny a directory that holds it instead"}, or keep the file out of the writable roots`,
      );
    }
    const names = byDirectory.get(parent) ?? [];
    names.push(path.slice(parent.length + 1));
    byDirectory.set(parent, names);
  }
  const fileDirectories: string[] = [];
  for (const parent of [...byDirectory.keys()].sort((a, b) => depth(a) - depth(b))) {
    const hidden = new Set(byDirectory.get(parent));
    let entries: Dirent[];
    try {
      entries = readdirSync(parent, { withFileTypes: true });
    } catch (error) {
      throw new SandboxUnavailableError(
        `denyRead cannot hide the files of ${JSON.stringify(parent)}: the directory cannot be listed (${(error as NodeJS.ErrnoException).code ?? "error"}), so its other entries cannot be kept. Deny the directory instead`,
        { cause: error },
      );
    }
    if (entries.length > MAX_DENIED_FILE_SIBLINGS) {
      throw new SandboxUnavailableError(
        `denyRead cannot hide the files of ${JSON.stringify(parent)}: the directory holds ${entries.length} entries, more than ${MAX_DENIED_FILE_SIBLINGS} (each is kept by one mount). Deny the directory instead`,
      );
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
    // nodev: opening it fails with EACCES), on a tmpfs entry the host cannot replace.
    for (const name of [...hidden].sort()) fileDirectories.push("--ro-bind", "/dev/null", join(parent, name));
    fileDirectories.push("--remount-ro", parent);
  }
  const directories = [...deniedDirectories]
    .sort((a, b) => depth(a) - depth(b))
    .flatMap((path) => ["--tmpfs", path, "--remount-ro", path]);
  return { fileDirectories, directories };
}

function depth(path: string): number {
  return path.split("/").length;
}
