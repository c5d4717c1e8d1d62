import { dirname, relative, sep } from "node:path";

/** True when `child` is `parent` or lies below it (both absolute, normalised). */
export function isWithin(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !rel.startsWith(sep));
}

/** The directories strictly between `root` and `path` (shallowest first); empty when `path` is not below `root`. */
export function pathAncestorsBetween(root: string, path: string): string[] {
  if (!isWithin(root, path) || root === path) return [];
  const out: string[] = [];
  for (let dir = dirname(path); dir !== root && isWithin(root, dir); dir = dirname(dir)) out.unshift(dir);
  return out;
}
