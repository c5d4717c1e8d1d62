import { randomUUID } from "node:crypto";
import {
  lstatSync,
  mkdir,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rm,
  rmdir,
  rmdirSync,
  rmSync,
} from "node:fs";
import { join } from "node:path";
import { SandboxUnavailableError } from "@suaveplan/dsh-sandbox";

/** Name prefix of every private temp area (the spare adds 32 hex digits, `mkdtemp` six characters). */
export const TEMP_DIR_PREFIX = "suaveplan-sbx-";

/**
 * The private temp areas of one provider. Each {@link take} hands out a fresh,
 * empty directory that no other call ever gets. To keep disk work off the
 * caller's path, one spare is created in the background after each use and
 * released directories are removed in the background, both on the libuv
 * thread pool; when the spare is not ready, `take` creates one synchronously.
 */
export interface PrivateTempDirs {
  /**
   * A fresh, empty directory owned by this process and closed to group and
   * others, as a canonical path: the spare when it is ready and still
   * verifiably so, otherwise one created now.
   * @throws SandboxUnavailableError when the directory cannot be created under `tempRoot`.
   */
  take(): string;
  /**
   * Remove a directory from {@link take} in the background (errors swallowed;
   * {@link dispose} retries what is left). Idempotent.
   */
  release(dir: string): void;
  /** Synchronously remove every directory still held, being removed, or spare. Idempotent; `take` then throws. */
  dispose(): void;
  /** Resolves once no background creation or removal is in flight (for tests and orderly shutdown). */
  settled(): Promise<void>;
}

interface Spare {
  readonly path: string;
  /** `pending`: in the slot; `failed`: its mkdir failed; `gone`: taken or dropped; `disposed`: dropped by dispose. */
  state: "pending" | "failed" | "gone" | "disposed";
  /** The mkdir callback reported success (a caller that never yields may never see this). */
  created: boolean;
}

/** `ours`: a directory of this process's user, removed in the background when not handed out. */
type Inspection = { ready: true; dir: string } | { ready: false; absent: boolean; ours: boolean };

const euid = typeof process.geteuid === "function" ? process.geteuid() : undefined;

/** Create the private temp areas of one provider under `tempRoot` (absolute). */
export function createPrivateTempDirs(tempRoot: string): PrivateTempDirs {
  const held = new Set<string>();
  const removing = new Set<string>();
  let spare: Spare | undefined;
  let disposed = false;
  let inFlight = 0;
  let waiters: (() => void)[] = [];

  const begin = (): void => {
    inFlight++;
  };
  const end = (): void => {
    inFlight--;
    if (inFlight > 0) return;
    const ready = waiters;
    waiters = [];
    for (const resolve of ready) resolve();
  };

  // Background work is queued here and handed to the libuv thread pool from
  // one microtask: after the caller's synchronous continuation (typically the
  // spawn of the confined command), never inside take() or release(). Handing
  // a request to an idle pool wakes a worker thread, which on a small machine
  // can preempt the caller for as long as the request runs.
  const queuedRemovals: string[] = [];
  let spareQueued = false;
  let flushQueued = false;
  const queue = (): void => {
    if (flushQueued) return;
    flushQueued = true;
    queueMicrotask(flush);
  };
  const flush = (): void => {
    flushQueued = false;
    for (const dir of queuedRemovals.splice(0)) startRemoval(dir);
    if (spareQueued) {
      spareQueued = false;
      startSpare();
    }
  };

  // Until its removal succeeds a path stays in `removing`, so dispose() retries it.
  const removeInBackground = (dir: string): void => {
    removing.add(dir);
    begin();
    queuedRemovals.push(dir);
    queue();
  };

  // Fire-and-forget, errors swallowed: a lone `rmdir` (one thread-pool
  // request) for the usual empty directory, a recursive `rm` when the command
  // left files behind.
  const startRemoval = (dir: string): void => {
    if (!removing.has(dir)) {
      end(); // dispose() swept it meanwhile
      return;
    }
    const done = (error: NodeJS.ErrnoException | null): void => {
      if (error === null || error.code === "ENOENT") removing.delete(dir);
      end();
    };
    try {
      rmdir(dir, (error) => {
        if (error === null || error.code === "ENOENT") done(error);
        else rm(dir, { recursive: true, force: true }, done);
      });
    } catch {
      end();
    }
  };

  const prepareSpare = (): void => {
    if (disposed || spare !== undefined || spareQueued) return;
    spareQueued = true;
    begin();
    queue();
  };

  const startSpare = (): void => {
    if (disposed || spare !== undefined) {
      end();
      return;
    }
    const next: Spare = {
      path: join(tempRoot, `${TEMP_DIR_PREFIX}${randomUUID().replaceAll("-", "")}`),
      state: "pending",
      created: false,
    };
    spare = next;
    liveSpares.add(next.path);
    installExitHook();
    const done = (error: NodeJS.ErrnoException | null): void => {
      if (error !== null) {
        if (next.state === "pending") next.state = "failed";
        liveSpares.delete(next.path);
      } else if (next.state === "disposed") {
        removeInBackground(next.path); // created after dispose() had swept the slot
      } else {
        next.created = true;
      }
      end();
    };
    try {
      mkdir(next.path, 0o700, done);
    } catch (error) {
      done(error as NodeJS.ErrnoException);
    }
  };

  // Readiness is read from the file system, not from the mkdir callback, so a
  // caller that does not return to the event loop between calls (one that
  // uses spawnSync, say) still gets the spare once its mkdir ran. Only a
  // real directory (not a symlink) owned by us, closed to group and others,
  // empty and not already handed out qualifies.
  const inspect = (path: string): Inspection => {
    let ours = false;
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || (euid !== undefined && st.uid !== euid))
        return { ready: false, absent: false, ours };
      const dir = realpathSync.native(path);
      if (held.has(dir) || removing.has(dir)) return { ready: false, absent: false, ours };
      ours = true;
      if (euid !== undefined && (st.mode & 0o077) !== 0) return { ready: false, absent: false, ours };
      if (readdirSync(path).length !== 0) return { ready: false, absent: false, ours };
      return { ready: true, dir };
    } catch (error) {
      return { ready: false, absent: (error as NodeJS.ErrnoException).code === "ENOENT", ours };
    }
  };

  const takeSpare = (): string | undefined => {
    const current = spare;
    if (current === undefined) return undefined;
    if (current.state === "failed") {
      current.state = "gone";
      spare = undefined;
      return undefined;
    }
    const found = inspect(current.path);
    // Still being created: keep it for a later call. A directory of ours that
    // was tampered with (not empty, opened up) is dropped and removed; anything
    // else is dropped untouched (not ours, or a directory in use).
    if (!found.ready && found.absent && !current.created) return undefined;
    current.state = "gone";
    spare = undefined;
    liveSpares.delete(current.path);
    if (found.ready) return found.dir;
    if (found.ours) removeInBackground(current.path);
    return undefined;
  };

  const createNow = (): string => {
    try {
      return realpathSync.native(mkdtempSync(join(tempRoot, TEMP_DIR_PREFIX)));
    } catch (error) {
      throw new SandboxUnavailableError(
        `cannot create the private temp area under tempRoot (${(error as NodeJS.ErrnoException).code ?? "error"}); point tempRoot at a writable directory`,
        { cause: error },
      );
    }
  };

  return {
    take() {
      if (disposed) {
        throw new SandboxUnavailableError(
          "this provider's temp areas were disposed; create a new provider to confine more commands",
        );
      }
      const dir = takeSpare() ?? createNow();
      held.add(dir);
      prepareSpare();
      return dir;
    },
    release(dir) {
      if (held.delete(dir)) removeInBackground(dir);
    },
    dispose() {
      disposed = true;
      const current = spare;
      spare = undefined;
      if (current !== undefined && current.state === "pending") {
        current.state = "disposed";
        liveSpares.delete(current.path);
        sweep(current.path);
      }
      for (const dir of removing) sweep(dir);
      removing.clear();
      // Held directories race nothing, so a failure to remove one is reported
      // (after trying them all), as before.
      let failure: unknown;
      for (const dir of held) {
        try {
          rmSync(dir, { recursive: true, force: true });
        } catch (error) {
          failure ??= error;
        }
      }
      held.clear();
      if (failure !== undefined) throw failure;
    },
    settled() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}

// Spares of providers that were never disposed: removed (only while still
// empty) when the process exits, so an undisposed provider leaves nothing
// behind either. One listener for the whole module, added on first use; a
// listener keeps no process alive.
const liveSpares = new Set<string>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const path of liveSpares) {
      try {
        rmdirSync(path);
      } catch {
        // already gone, not empty, or never created
      }
    }
  });
}

// Synchronous removal at dispose(); a background removal of the same path may
// race it, so a failure here is not fatal (the background one finishes it).
function sweep(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // raced by a background removal, or not ours to remove
  }
}
