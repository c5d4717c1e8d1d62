import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
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

/** Symlinks followed while expanding dangling links, as the kernel's limit (`MAXSYMLINKS`). */
const MAX_SYMLINKS = 40;

/** One file-system question the walk asks; answered synchronously or asynchronously by a driver. */
type Ask = { op: "realpath" | "lstat-is-symlink" | "readlink"; path: string };

/**
 * The walk itself, as a generator so that the async and sync drivers share one implementation.
 * Each yielded {@link Ask} is answered with the result (`realpath` → string, `lstat-is-symlink` →
 * boolean, `readlink` → string), or thrown into the generator as the fs error.
 */
function* walk(input: string, cwd: string): Generator<Ask, string, string | boolean> {
  const { root, parts } = splitComponents(input, cwd);
  let current = (yield { op: "realpath", path: root }) as string;
  // Components still to walk, in order (a dangling symlink's target is spliced in front).
  const queue = parts.reverse();
  // Trailing components below `current` that do not exist: nothing below them can exist either,
  // so they are kept lexically without asking the file system again, and `..` pops them without
  // re-normalising a long string (the walk stays linear in the path's length).
  const missing: string[] = [];
  let symlinks = 0;
  while (queue.length > 0) {
    const part = queue.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (missing.length > 0) missing.pop();
      else current = path.dirname(current);
      continue;
    }
    if (missing.length > 0) {
      missing.push(part);
      continue;
    }
    const next = path.join(current, part);
    try {
      current = (yield { op: "realpath", path: next }) as string;
      continue;
    } catch (error) {
      const errno = errnoOf(error);
      if (!MISSING.has(errno))
        throw new CanonicalisationError(errno, `cannot resolve path component: ${errno}`);
    }
    // `next` does not resolve. If it is a dangling symlink, open(2) would follow it (O_CREAT
    // creates the target), so the walk continues at the link's target, not at the link.
    let isSymlink = false;
    try {
      isSymlink = (yield { op: "lstat-is-symlink", path: next }) as boolean;
    } catch (error) {
      const errno = errnoOf(error);
      if (!MISSING.has(errno))
        throw new CanonicalisationError(errno, `cannot resolve path component: ${errno}`);
    }
    if (!isSymlink) {
      missing.push(part);
      continue;
    }
    if (++symlinks > MAX_SYMLINKS) {
      throw new CanonicalisationError("ELOOP", "cannot resolve path component: ELOOP");
    }
    let target: string;
    try {
      target = (yield { op: "readlink", path: next }) as string;
    } catch (error) {
      const errno = errnoOf(error);
      throw new CanonicalisationError(errno, `cannot resolve path component: ${errno}`);
    }
    if (path.isAbsolute(target)) {
      const parsed = splitComponents(target, "/");
      current = (yield { op: "realpath", path: parsed.root }) as string;
      for (const segment of parsed.parts.reverse()) queue.push(segment);
    } else {
      for (const segment of target.split(/[\\/]+/u).reverse()) queue.push(segment);
    }
  }
  return missing.length === 0 ? current : path.join(current, ...missing);
}

/**
 * Canonicalise `input` the way the kernel would walk it: made absolute against `cwd`, each
 * component resolved in order, symlinks replaced by their `realpath` (so a `..` after a symlink
 * climbs out of the link's target, exactly as `open(2)` would), dangling symlinks replaced by
 * (the canonical form of) their target, and components that do not exist yet appended lexically
 * below the nearest existing ancestor.
 *
 * @throws CanonicalisationError when a component exists but cannot be resolved (e.g. `ELOOP`, `EACCES`).
 */
export async function canonicalisePath(input: string, cwd: string): Promise<string> {
  const walker = walk(input, cwd);
  let step = walker.next();
  while (!step.done) {
    const ask = step.value;
    let answer: string | boolean;
    try {
      answer =
        ask.op === "realpath"
          ? await realpath(ask.path)
          : ask.op === "readlink"
            ? await readlink(ask.path)
            : (await lstat(ask.path)).isSymbolicLink();
    } catch (error) {
      step = walker.throw(error);
      continue;
    }
    step = walker.next(answer);
  }
  return step.value;
}

/** Synchronous {@link canonicalisePath}, used once per policy rule at construction. */
export function canonicalisePathSync(input: string, cwd: string): string {
  const walker = walk(input, cwd);
  let step = walker.next();
  while (!step.done) {
    const ask = step.value;
    let answer: string | boolean;
    try {
      answer =
        ask.op === "realpath"
          ? realpathSync(ask.path)
          : ask.op === "readlink"
            ? readlinkSync(ask.path)
            : lstatSync(ask.path).isSymbolicLink();
    } catch (error) {
      step = walker.throw(error);
      continue;
    }
    step = walker.next(answer);
  }
  return step.value;
}
