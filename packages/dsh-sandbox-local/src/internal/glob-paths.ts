import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** True when `segment` holds a glob character (`*`, `?`, `[`). */
export function isGlobSegment(segment: string): boolean {
  return /[*?[]/.test(segment);
}

/** True when `pattern` (a path) holds a glob character in any segment. */
export function isGlob(pattern: string): boolean {
  return pattern.split("/").some(isGlobSegment);
}

/**
 * A regular expression for one path segment: `*` matches any run of
 * characters but `/`, `?` one character, `[...]` a class (`[!...]` negated);
 * a leading `.` is matched only literally, never by `*` or `?` (as in a shell).
 */
export function segmentMatcher(segment: string): RegExp {
  let source = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i] as string;
    if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else if (c === "[") {
      const end = segment.indexOf("]", i + 2);
      if (end === -1) source += "\\[";
      else {
        let body = segment.slice(i + 1, end);
        if (body.startsWith("!")) body = `^${body.slice(1)}`;
        source += `[${body.replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\]/g, "\\$&");
  }
  const dotSafe = segment.startsWith(".") ? "" : "(?!\\.)";
  return new RegExp(`^${dotSafe}${source}$`);
}

/** Thrown by {@link expandGlob} when a pattern would visit more than its budget of directories. */
export class GlobBudgetExceeded extends Error {}

/**
 * The existing paths that match an absolute `pattern` (segments may use `*`,
 * `?`, `[...]`, and `**` for zero or more directories). Symbolic links are
 * matched as entries but never descended into by `**`. Paths are returned
 * lexically (not canonicalised), sorted, without duplicates.
 * @throws GlobBudgetExceeded after visiting `maxDirectories` directories.
 */
export function expandGlob(pattern: string, maxDirectories = 10_000): string[] {
  const segments = pattern.split("/").filter((s) => s !== "");
  const out = new Set<string>();
  let visited = 0;
  const list = (dir: string): string[] => {
    if (++visited > maxDirectories) throw new GlobBudgetExceeded(pattern);
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  };
  const isRealDirectory = (path: string): boolean => {
    try {
      return lstatSync(path).isDirectory();
    } catch {
      return false;
    }
  };
  const exists = (path: string): boolean => {
    try {
      lstatSync(path);
      return true;
    } catch {
      return false;
    }
  };
  const walk = (base: string, index: number): void => {
    if (index === segments.length) {
      if (exists(base)) out.add(base);
      return;
    }
    const segment = segments[index] as string;
    if (segment === "**") {
      walk(base, index + 1); // zero directories
      if (!isRealDirectory(base)) return;
      for (const name of list(base)) {
        const child = join(base, name);
        if (isRealDirectory(child)) walk(child, index); // one more, and maybe more
      }
      return;
    }
    if (!isGlobSegment(segment)) {
      walk(join(base, segment), index + 1);
      return;
    }
    const matcher = segmentMatcher(segment);
    for (const name of list(base)) if (matcher.test(name)) walk(join(base, name), index + 1);
  };
  walk("/", 0);
  return [...out].sort();
}
