import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readdir, stat } from "node:fs/promises";
import {
  PERMISSION_CODES,
  type PermissionChecker,
  PermissionError,
} from "@suaveplan/api-sandbox-permissions";
import { SAND_VM_CODES, VmSandboxError } from "../../errors/sand-vm-codes.js";

/** What `fs.stat` returns to the plugin. */
export interface FsStat {
  type: "file" | "directory" | "symlink" | "other";
  /** Size in bytes. */
  size: number;
  /** Last modification, ms since the epoch. */
  mtimeMs: number;
}

/**
 * The host side of the fs capability. Called only after the `PermissionChecker` allowed the
 * request, always with the CANONICAL absolute path (symlinks resolved), never the plugin's string.
 */
export interface FsHostAdapter {
  read(path: string, signal: AbortSignal): Promise<Uint8Array>;
  /** Create or truncate `path` and write `data`. */
  write(path: string, data: Uint8Array, signal: AbortSignal): Promise<void>;
  /** Entry names of the directory at `path`. */
  list(path: string, signal: AbortSignal): Promise<string[]>;
  stat(path: string, signal: AbortSignal): Promise<FsStat>;
}

/** fs operations a plugin can call, and the access each needs. `list`/`stat` need `read`. */
export const FS_OPERATIONS = Object.freeze({
  read: "read",
  write: "write",
  list: "read",
  stat: "read",
} as const);

/** One fs operation name. */
export type FsOperation = keyof typeof FS_OPERATIONS;

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/**
 * What an adapter throws for a path that is not a regular file (a FIFO, a socket, a device):
 * `handleFsCall` reports it as `SAND_VM_FS_FAILED` naming the kind, never the host path.
 */
export class NotRegularFileError extends Error {
  constructor(readonly fileType: "fifo" | "socket" | "character device" | "block device" | "other") {
    super(`not a regular file (${fileType})`);
    this.name = "NotRegularFileError";
  }
}

/** Open `path` without blocking and keep it only when it is a regular file (see {@link createNodeFsAdapter}). */
async function openRegularFile(path: string, flags: number, mode?: number): Promise<FileHandle> {
  const handle = await open(path, flags | NOFOLLOW | NONBLOCK, mode);
  let info: Stats;
  try {
    info = await handle.stat();
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (info.isFile()) return handle;
  await handle.close();
  if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  throw new NotRegularFileError(
    info.isFIFO()
      ? "fifo"
      : info.isSocket()
        ? "socket"
        : info.isCharacterDevice()
          ? "character device"
          : info.isBlockDevice()
            ? "block device"
            : "other",
  );
}

/**
 * The default adapter: real `node:fs/promises`, regular files only. Files are opened with
 * `O_NOFOLLOW`, so a symlink swapped in at the final component after the permission check makes
 * the call fail (`ELOOP`) instead of following it, and with `O_NONBLOCK`, then checked with
 * `fstat`: a FIFO, socket or device is closed again and refused ({@link NotRegularFileError}). A
 * blocking `open` or `read` of a FIFO would hold one of libuv's four threads until a writer came
 * (no timeout or abort frees it), and the host's own file I/O waits behind those threads.
 */
export function createNodeFsAdapter(): FsHostAdapter {
  return {
    async read(path, signal) {
      const handle = await openRegularFile(path, constants.O_RDONLY);
      try {
        return new Uint8Array(await handle.readFile({ signal }));
      } finally {
        await handle.close();
      }
    },
    async write(path, data, signal) {
      signal.throwIfAborted();
      // A FIFO with no reader refuses a non-blocking open for writing (`ENXIO`); one with a reader
      // is refused by the check. O_TRUNC does nothing to a FIFO or a device.
      const handle = await openRegularFile(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
        0o666,
      );
      try {
        await handle.writeFile(data, { signal });
      } finally {
        await handle.close();
      }
    },
    async list(path, signal) {
      const names = await readdir(path);
      signal.throwIfAborted();
      return names.sort();
    },
    async stat(path, signal) {
      const info = await lstat(path);
      signal.throwIfAborted();
      const followed = info.isSymbolicLink() ? await stat(path) : info;
      const type = followed.isFile()
        ? "file"
        : followed.isDirectory()
          ? "directory"
          : info.isSymbolicLink()
            ? "symlink"
            : "other";
      return { type, size: followed.size, mtimeMs: followed.mtimeMs };
    },
  };
}

function errnoOf(error: unknown): string {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && /^E[A-Z0-9]+$/u.test(code) ? code : "EIO";
}

/**
 * Check then forward one fs call. Denials raise `PERMISSION_DENIED` without touching the adapter;
 * adapter failures raise `SAND_VM_FS_FAILED` naming only the errno (or, for a
 * {@link NotRegularFileError}, the kind of file). Messages quote the plugin's own path string —
 * never the canonical host path.
 */
export async function handleFsCall(
  op: FsOperation,
  args: readonly unknown[],
  context: { checker: PermissionChecker; adapter: FsHostAdapter; signal: AbortSignal },
): Promise<unknown> {
  const [path, data] = args;
  const shown = JSON.stringify(typeof path === "string" ? path : String(path));
  const decision = await context.checker.checkFs(path as string, FS_OPERATIONS[op]);
  if (!decision.allowed) {
    throw new PermissionError(
      PERMISSION_CODES.DENIED,
      `fs.${op} of ${shown} was denied by the sandbox policy (${decision.reason})`,
      { details: { capability: "fs", operation: op, reason: decision.reason } },
    );
  }
  if (op === "write" && !(data instanceof Uint8Array)) {
    throw new VmSandboxError(SAND_VM_CODES.FS_FAILED, "fs.write: data must be a string or bytes");
  }
  try {
    switch (op) {
      case "read":
        return await context.adapter.read(decision.canonicalPath, context.signal);
      case "write":
        await context.adapter.write(decision.canonicalPath, data as Uint8Array, context.signal);
        return undefined;
      case "list":
        return await context.adapter.list(decision.canonicalPath, context.signal);
      case "stat":
        return await context.adapter.stat(decision.canonicalPath, context.signal);
    }
  } catch (error) {
    if (error instanceof NotRegularFileError) {
      throw new VmSandboxError(
        SAND_VM_CODES.FS_FAILED,
        `fs.${op} of ${shown} failed: not a regular file (a ${error.fileType}); only regular files can be read or written`,
        { details: { operation: op, fileType: error.fileType } },
      );
    }
    const errno = errnoOf(error);
    throw new VmSandboxError(SAND_VM_CODES.FS_FAILED, `fs.${op} of ${shown} failed: ${errno}`, {
      details: { operation: op, errno },
    });
  }
}
