import { lstatSync, readFileSync } from "node:fs";
import type { LocalConfinePolicy } from "../backend/local-backend.js";
import { isWithin } from "./paths.js";

/** Where the kernel lists this network namespace's UNIX sockets. */
const PROC_NET_UNIX = "/proc/net/unix";

/** `Num: RefCount Protocol Flags Type St Inode Path` — the path is the rest of the line (it may hold spaces). */
const LINE = /^\s*[0-9a-f]+:\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s(.+)$/i;

/** bwrap builds these afresh, so host sockets beneath them are out of reach already. */
const FRESH_MOUNTS = ["/dev", "/proc"];

/** Seams of {@link hostUnixSocketPaths} (tests). */
export interface HostUnixSocketSource {
  /** The text of `/proc/net/unix`, or undefined when it cannot be read. */
  readTable(): string | undefined;
  /** True when `path` is a socket in this mount namespace (not followed through a symlink). */
  isSocket(path: string): boolean;
}

const realSource: HostUnixSocketSource = {
  readTable() {
    try {
      return readFileSync(PROC_NET_UNIX, "utf8");
    } catch {
      return undefined;
    }
  },
  isSocket(path) {
    try {
      return lstatSync(path).isSocket();
    } catch {
      return false;
    }
  },
};

/**
 * The file-system UNIX sockets bound on this host right now (listening
 * servers such as `docker.sock`, an SSH agent, D-Bus, and datagram sinks such
 * as the journal), read from `/proc/net/unix`: absolute paths that exist here
 * as sockets, outside `/dev` and `/proc`, sorted and without duplicates.
 * Abstract sockets (`@…`) are not included: a network namespace of its own
 * already cuts them off. Sockets bound after the call are not seen.
 */
export function hostUnixSocketPaths(source: HostUnixSocketSource = realSource): string[] {
  const table = source.readTable();
  if (table === undefined) return [];
  const paths = new Set<string>();
  for (const line of table.split("\n")) {
    const path = LINE.exec(line)?.[1];
    if (path === undefined || !path.startsWith("/")) continue;
    if (FRESH_MOUNTS.some((mount) => isWithin(mount, path))) continue;
    if (source.isSocket(path)) paths.add(path);
  }
  return [...paths].sort();
}

/**
 * bwrap arguments that put a read-only `/dev/null` over each socket, so a
 * `connect()` to it is refused. Give them after every other bind, so none
 * covers them.
 */
export function unixSocketMasks(paths: readonly string[]): string[] {
  return paths.flatMap((path) => ["--ro-bind", "/dev/null", path]);
}

/** The bridge's port inside the command's own network namespace (nothing else listens there). */
export const NAMESPACE_PROXY_PORT = 3128;

/** Host sockets to mask: every one but the proxy's and those the operator allowed. */
export function maskedSockets(sockets: readonly string[], policy: LocalConfinePolicy): string[] {
  const keep = new Set([
    ...(policy.allowUnixSockets ?? []),
    ...(policy.proxySocket === undefined ? [] : [policy.proxySocket]),
  ]);
  return sockets.filter((path) => !keep.has(path));
}
