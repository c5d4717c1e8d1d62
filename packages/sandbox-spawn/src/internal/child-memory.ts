import { readFileSync } from "node:fs";

/** How often the host samples a running child's resident memory, in ms. */
export const CHILD_MEMORY_SAMPLE_MS = 10;

/**
 * Resident memory a child may add on top of `memoryLimit` before it is
 * stopped, in bytes: what node itself takes while running guest code (the
 * young generation, compiled code, the codec's buffers), counted with the
 * guest's allocations because the host sees one process.
 */
export const CHILD_MEMORY_ALLOWANCE_BYTES = 32 * 1024 * 1024;

/** A process's resident set size (`VmRSS` in `/proc/<pid>/status`), in bytes; `undefined` when it cannot be read. */
export function readResidentBytes(pid: number): number | undefined {
  const text = readProc(`/proc/${pid}/status`);
  const found = text === undefined ? null : /^VmRSS:\s+(\d+) kB$/m.exec(text);
  return found === null ? undefined : Number(found[1]) * 1024;
}

/** A `/proc` file's text; `undefined` when it cannot be read (the process is gone, no `/proc`). */
function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "latin1");
  } catch {
    return undefined;
  }
}

/** Processes counted at most in {@link readTreeResidentBytes}. */
const MAX_TREE_PROCESSES = 64;

/**
 * The resident memory of `pid` and every process below it (through
 * `/proc/<pid>/task/<pid>/children`), in bytes; `undefined` when `pid` itself
 * cannot be read. A confined child is a tree — bwrap, the launcher and node
 * inside — whose memory is node's, not the process the host spawned. Each
 * process below is added to `seen`, when given, so that it can be killed even
 * after it left the tree.
 */
export function readTreeResidentBytes(pid: number, seen?: SeenProcesses): number | undefined {
  const own = readResidentBytes(pid);
  if (own === undefined) return undefined;
  let total = own;
  for (const below of descendantsOf(pid)) {
    total += readResidentBytes(below) ?? 0;
    if (seen !== undefined && !seen.has(below)) {
      const started = startTimeOf(below);
      if (started !== undefined) seen.set(below, started);
    }
  }
  return total;
}

/**
 * Processes once seen below a child: pid → its start time (`/proc/<pid>/stat`
 * field 22), so that a pid the kernel handed to another process since is
 * never mistaken for one of ours.
 */
export type SeenProcesses = Map<number, string>;

/** A process's start time in clock ticks after boot (`/proc/<pid>/stat` field 22); `undefined` when it is gone. */
export function startTimeOf(pid: number): string | undefined {
  const text = readProc(`/proc/${pid}/stat`);
  // Field 2 (the command) is in parentheses and may hold spaces; field 3 comes after the last ") ".
  return text?.slice(text.lastIndexOf(") ") + 2).split(" ")[19];
}

/**
 * The processes below `pid` (Linux `/proc/<pid>/task/<pid>/children`, at most
 * {@link MAX_TREE_PROCESSES}), parents before children; empty where `/proc`
 * cannot tell. Read before killing `pid`: once it is gone they belong to init.
 */
export function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = childrenOf(pid);
  while (queue.length > 0 && found.length < MAX_TREE_PROCESSES) {
    const next = queue.shift() as number;
    found.push(next);
    queue.push(...childrenOf(next));
  }
  return found;
}

function childrenOf(pid: number): number[] {
  return (readProc(`/proc/${pid}/task/${pid}/children`) ?? "").split(" ").filter(Boolean).map(Number);
}

/**
 * True when this host can read a child's resident memory (Linux with
 * `/proc`, detected by reading this process's own entry — not assumed from
 * the platform name alone).
 */
export const HOST_READS_CHILD_MEMORY: boolean =
  process.platform === "linux" && readResidentBytes(process.pid) !== undefined;
