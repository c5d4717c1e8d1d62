import { lstatSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { BackendProbeResult, LocalBackendName } from "../backend/local-backend.js";

/**
 * Where a provider may keep probe results between processes. A result is
 * used only when its `key` matches the one computed now (runner binaries,
 * kernel, boot, user); only successful probes are stored, so a host that is
 * fixed is probed again, and one that breaks after a cached probe fails
 * closed when the runner runs (its runner-failure rules).
 */
export interface ProbeCache {
  /** The cached result for `backend` under `key`, if any. */
  read(backend: LocalBackendName, key: string): BackendProbeResult | undefined;
  /** Remember a successful probe. Never throws. */
  write(backend: LocalBackendName, key: string, result: BackendProbeResult): void;
}

const FILE = "probes-v1.json";

/**
 * A {@link ProbeCache} in a JSON file under `dir` (default
 * `$XDG_CACHE_HOME/suaveplan-sandbox`, else `~/.cache/suaveplan-sandbox`).
 * The directory and file are used only when they are ours: a real directory
 * owned by this user and not writable by group or others, a regular file
 * likewise; anything else is ignored (never trusted, never overwritten).
 * Created `0700` / `0600`, written atomically (rename).
 */
export function createFileProbeCache(dir: string = defaultCacheDir()): ProbeCache {
  const file = join(dir, FILE);
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const ours = (path: string, kind: "dir" | "file"): boolean => {
    try {
      const stat = lstatSync(path);
      const rightKind = kind === "dir" ? stat.isDirectory() : stat.isFile();
      return rightKind && (uid === undefined || stat.uid === uid) && (stat.mode & 0o022) === 0;
    } catch {
      return false;
    }
  };
  const load = (): Record<string, { key: string; result: BackendProbeResult }> => {
    if (!ours(dir, "dir") || !ours(file, "file")) return {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
      return typeof parsed === "object" && parsed !== null
        ? (parsed as Record<string, { key: string; result: BackendProbeResult }>)
        : {};
    } catch {
      return {};
    }
  };
  return {
    read(backend, key) {
      const entry = load()[backend];
      if (entry === undefined || entry.key !== key) return undefined;
      const result = entry.result;
      return typeof result === "object" &&
        result !== null &&
        result.backend === backend &&
        result.available === true
        ? result
        : undefined;
    },
    write(backend, key, result) {
      if (!result.available) return;
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!ours(dir, "dir")) return;
        const entries = load();
        entries[backend] = { key, result };
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, JSON.stringify(entries), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        // a cache that cannot be written is only slower
      }
    },
  };
}

function defaultCacheDir(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg?.startsWith("/") ? xdg : join(homedir(), ".cache"), "suaveplan-sandbox");
}

/** Identity of a file for a cache key: inode, size and modification time; `missing` when absent. */
export function fileIdentity(path: string | undefined): string {
  if (path === undefined) return "none";
  try {
    const stat = statSync(path);
    return `${path}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return `${path}:missing`;
  }
}
