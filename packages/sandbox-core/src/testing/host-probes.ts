import { readdirSync, readFileSync } from "node:fs";

/** Count of each kind of active libuv resource (`process.getActiveResourcesInfo()`). */
export type ResourceCounts = ReadonlyMap<string, number>;

/** Snapshot the active handles/requests keeping this process alive, counted by kind. */
export function activeResources(): ResourceCounts {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Kinds whose count grew from `before` to `after`, e.g. `["Timeout +1"]`. */
export function grownResources(before: ResourceCounts, after: ResourceCounts): string[] {
  const grown: string[] = [];
  for (const [kind, count] of after) {
    const extra = count - (before.get(kind) ?? 0);
    if (extra > 0) grown.push(`${kind} +${extra}`);
  }
  return grown.sort();
}

/**
 * Pids of this process's live children, read from `/proc/<pid>/task/<tid>/children`
 * (Linux). Returns `undefined` where `/proc` is not available.
 */
export function childPids(): Set<number> | undefined {
  const tasksDir = `/proc/${process.pid}/task`;
  let tasks: string[];
  try {
    tasks = readdirSync(tasksDir);
  } catch {
    return undefined;
  }
  const pids = new Set<number>();
  for (const task of tasks) {
    let text = "";
    try {
      text = readFileSync(`${tasksDir}/${task}/children`, "utf8");
    } catch {
      continue; // the thread ended while we looked
    }
    for (const pid of text.split(/\s+/)) if (pid !== "") pids.add(Number(pid));
  }
  return pids;
}

/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
