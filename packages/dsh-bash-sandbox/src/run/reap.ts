import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * What identifies the processes of one run on Linux: the shell's pid (which
 * is also its session and process-group id, as it is spawned detached) and
 * the `socket:[inode]` links of the child's ends of its stdout/stderr pipes.
 */
export interface RunIdentity {
  /** Pid of the spawned runner (session leader and process-group leader). */
  readonly root: number;
  /** `/proc/<pid>/fd` link targets of the child's stdout/stderr ends, e.g. `socket:[123]`. */
  readonly stdioLinks: ReadonlySet<string>;
}

interface ProcessStat {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  zombie: boolean;
}

const LINUX = process.platform === "linux";

/**
 * The link targets of `pid`'s fd 1 and 2, read right after spawn (while the
 * runner still holds them). Empty off Linux or when they cannot be read.
 */
export function stdioLinksOf(pid: number | undefined): ReadonlySet<string> {
  const links = new Set<string>();
  if (!LINUX || pid === undefined) return links;
  for (const fd of [1, 2]) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith("socket:") || target.startsWith("pipe:")) links.add(target);
    } catch {
      // gone already, or not ours to read
    }
  }
  return links;
}

/**
 * Stop, then kill, every process that still belongs to the run: members of
 * its session or process group, descendants of the root or of any member, and
 * — with `scanFds` — every process holding the run's stdout/stderr pipe ends
 * (the processes that escaped with `setsid` or a double fork but keep the
 * output open). Processes are SIGSTOPped as they are found so none can fork
 * away while the scan repeats, and SIGKILLed once a scan finds nothing new.
 * Linux only (reads `/proc`); elsewhere it does nothing. Never throws.
 * @returns how many processes were killed.
 */
export function reapRun(run: RunIdentity, scanFds: boolean): number {
  if (!LINUX) return 0;
  const stopped = new Set<number>();
  try {
    for (let round = 0; round < 32; round++) {
      const fresh = [...membersOf(run, scanFds, stopped)].filter((pid) => !stopped.has(pid));
      if (fresh.length === 0) break;
      for (const pid of fresh) {
        signal(pid, "SIGSTOP");
        stopped.add(pid);
      }
    }
  } finally {
    for (const pid of stopped) signal(pid, "SIGKILL");
  }
  return stopped.size;
}

function membersOf(run: RunIdentity, scanFds: boolean, known: ReadonlySet<number>): Set<number> {
  const stats = processStats();
  const members = new Set<number>();
  const children = new Map<number, number[]>();
  for (const stat of stats) {
    if (stat.pid === process.pid || stat.zombie) continue;
    const siblings = children.get(stat.ppid);
    if (siblings === undefined) children.set(stat.ppid, [stat.pid]);
    else siblings.push(stat.pid);
    if (stat.pid === run.root || stat.sid === run.root || stat.pgid === run.root) members.add(stat.pid);
    else if (scanFds && run.stdioLinks.size > 0 && holdsAny(stat.pid, run.stdioLinks)) members.add(stat.pid);
  }
  const queue = [run.root, ...members, ...known];
  while (queue.length > 0) {
    const parent = queue.pop() as number;
    for (const child of children.get(parent) ?? []) {
      if (!members.has(child)) {
        members.add(child);
        queue.push(child);
      }
    }
  }
  members.delete(process.pid);
  return members;
}

function processStats(): ProcessStat[] {
  const stats: ProcessStat[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return stats;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid pgrp session …; comm may contain spaces and parentheses.
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      stats.push({
        pid: Number(name),
        ppid: Number(fields[1]),
        pgid: Number(fields[2]),
        sid: Number(fields[3]),
        zombie: fields[0] === "Z" || fields[0] === "X",
      });
    } catch {
      // exited meanwhile
    }
  }
  return stats;
}

function holdsAny(pid: number, links: ReadonlySet<string>): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // exited, or another user's process
  }
  for (const fd of fds) {
    try {
      if (links.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}
