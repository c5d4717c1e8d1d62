import { realpathSync } from "node:fs";
import { realpath } from "node:fs/promises";
import * as path from "node:path";

/** Errno codes that mean "this component does not exist (as a directory)": continue lexically. */
const MISSING = new Set(["ENOENT", "ENOTDIR"]);

/** Thrown by {@link canonicalisePath} when a component cannot be resolved (ELOOP, EACCES, NUL byte …). */
export class CanonicalisationError extends Error {
  constructor(
    readonly errno: string,
    message: string,
  ) {
    super(message);
    this.name = "CanonicalisationError";
  }
}

function errnoOf(error: unknown): string {
  if (typeof error === "object" && error !== null && "code" in error && typeof error.code === "string") {
    return error.code;
  }
  return "EUNKNOWN";
}

function splitComponents(input: string, cwd: string): { root: string; parts: string[] } {
  if (input.includes("\0")) throw new CanonicalisationError("EINVAL", "path contains a NUL byte");
  // Join WITHOUT normalising: `..` must be applied after the symlinks before it are resolved.
  const absolute = path.isAbsolute(input) ? input : `${cwd}${path.sep}${input}`;
  const { root } = path.parse(absolute);
  const parts = absolute.slice(root.length).split(/[\\/]+/u);
  return { root, parts };
}

function step(current: string, part: string): string | undefined {
  if (part === "" || part === ".") return current;
  if (part === "..") return path.dirname(current);
  return undefined;
}

/**
 * Canonicalise `input` the way the kernel would walk it: made absolute against `cwd`, each
 * component resolved in order, symlinks replaced by their `realpath` (so a `..` after a symlink
 * climbs out of the link's target, exactly as `open(2)` would), and components that do not exist
 * yet appended lexically below the nearest existing ancestor.
 *
 * @throws CanonicalisationError when a component exists but cannot be resolved (e.g. `ELOOP`, `EACCES`).
 */
export async function canonicalisePath(input: string, cwd: string): Promise<string> {
  const { root, parts } = splitComponents(input, cwd);
  let current = await realpath(root);
  for (const part of parts) {
    const moved = step(current, part);
    if (moved !== undefined) {
      current = moved;
      continue;
    }
    const next = path.join(current, part);
    try {
      current = await realpath(next);
    } catch (error) {
      const errno = errnoOf(error);
      if (!MISSING.has(errno))
        throw new CanonicalisationError(errno, `cannot resolve path component: ${errno}`);
      current = next;
    }
  }
  return current;
}

/** Synchronous {@link canonicalisePath}, used once per policy rule at construction. */
export function canonicalisePathSync(input: string, cwd: string): string {
  const { root, parts } = splitComponents(input, cwd);
  let current = realpathSync(root);
  for (const part of parts) {
    const moved = step(current, part);
    if (moved !== undefined) {
      current = moved;
      continue;
    }
    const next = path.join(current, part);
    try {
      current = realpathSync(next);
    } catch (error) {
      const errno = errnoOf(error);
      if (!MISSING.has(errno))
        throw new CanonicalisationError(errno, `cannot resolve path component: ${errno}`);
      current = next;
    }
  }
  return current;
}
