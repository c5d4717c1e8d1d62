import * as path from "node:path";
import { canonicalisePathSync } from "./canonicalise-path.js";

/** Kind of access a rule grants. `write` does NOT imply `read` (see README, "Policy"). */
export type FsAccess = "read" | "write";

/** One compiled `policy.fs[]` entry. */
export interface FsRule {
  /** The pattern as written in the policy. */
  readonly pattern: string;
  /** The access this rule grants. */
  readonly access: FsAccess;
  /** Canonical absolute directory (or file) the pattern starts at; symlinks resolved at construction. */
  readonly base: string;
  /** Segment matchers after `base`: `"**"` or a compiled single-segment matcher. */
  readonly segments: readonly SegmentMatcher[];
}

type SegmentMatcher = "**" | RegExp;

function isGlobSegment(segment: string): boolean {
  return segment.includes("*");
}

/**
 * Why `pattern` is not a valid fs pattern, or `undefined` when it is. Syntax (the only one):
 * `/`-separated segments; a segment that is exactly `**` matches zero or more whole segments;
 * `*` inside any other segment matches any run of characters except `/` (dot-files included);
 * every other character, including `?`, `[` and `{`, is literal. `.` and `..` may only appear
 * before the first glob segment.
 */
export function fsPatternProblem(pattern: string): string | undefined {
  if (pattern.includes("\0")) return "must not contain a NUL byte";
  const segments = pattern.split("/");
  let seenGlob = false;
  for (const segment of segments) {
    if (segment.includes("**") && segment !== "**") return "`**` must be a whole path segment";
    if (isGlobSegment(segment)) seenGlob = true;
    else if (seenGlob && (segment === "." || segment === "..")) {
      return "`.` and `..` are not allowed after a glob segment";
    }
  }
  return undefined;
}

function compileSegment(segment: string): SegmentMatcher {
  if (segment === "**") return "**";
  const source = segment
    .split("*")
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&"))
    .join("[^/]*");
  return new RegExp(`^${source}$`, "u");
}

/**
 * Compile one policy entry. The literal prefix (every segment before the first glob) is
 * canonicalised like a request path, so `/tmp/x/**` still matches when `/tmp` is a symlink.
 * Relative patterns are resolved against `cwd`.
 */
export function compileFsRule(pattern: string, access: FsAccess, cwd: string): FsRule {
  const absolute = path.isAbsolute(pattern) ? pattern : `${cwd}${path.sep}${pattern}`;
  const segments = absolute.split("/");
  const firstGlob = segments.findIndex(isGlobSegment);
  const literal = firstGlob === -1 ? segments : segments.slice(0, firstGlob);
  const globs = firstGlob === -1 ? [] : segments.slice(firstGlob).filter((s) => s !== "" && s !== ".");
  const base = canonicalisePathSync(literal.join("/") || "/", cwd);
  // Consecutive `**` segments mean the same as one; collapsing them keeps matching linear.
  const collapsed = globs.filter((s, i) => !(s === "**" && globs[i - 1] === "**"));
  return { pattern, access, base, segments: collapsed.map(compileSegment) };
}

/**
 * Match `parts` against `matchers` bottom-up (row `m` says whether `matchers[m..]` matches
 * `parts[p..]` for every `p`): O(matchers × parts) time and O(parts) memory, with no recursion,
 * even for many `**` on a very long requested path.
 */
function matchSegments(matchers: readonly SegmentMatcher[], parts: readonly string[]): boolean {
  const n = parts.length;
  let below = new Uint8Array(n + 1); // row for matchers[m + 1..]
  below[n] = 1; // no matchers left: only the empty rest matches
  for (let m = matchers.length - 1; m >= 0; m--) {
    const head = matchers[m] as SegmentMatcher;
    const row = new Uint8Array(n + 1);
    for (let p = n; p >= 0; p--) {
      if (head === "**") row[p] = below[p] === 1 || (p < n && row[p + 1] === 1) ? 1 : 0;
      else row[p] = p < n && below[p + 1] === 1 && head.test(parts[p] as string) ? 1 : 0;
    }
    below = row;
  }
  return below[0] === 1;
}

/** True when the canonical absolute `canonicalPath` is matched by `rule` (access not considered). */
export function matchesFsRule(rule: FsRule, canonicalPath: string): boolean {
  let remainder: string;
  if (canonicalPath === rule.base) remainder = "";
  else {
    const prefix = rule.base.endsWith(path.sep) ? rule.base : `${rule.base}${path.sep}`;
    if (!canonicalPath.startsWith(prefix)) return false;
    remainder = canonicalPath.slice(prefix.length);
  }
  const parts = remainder === "" ? [] : remainder.split(path.sep);
  return matchSegments(rule.segments, parts);
}
