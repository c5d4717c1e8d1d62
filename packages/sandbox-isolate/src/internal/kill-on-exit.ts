import type { ChildProcess } from "node:child_process";

/** Children this process started and has not seen exit. */
const children = new Set<ChildProcess>();
let hooked = false;

/**
 * Kill `child` (SIGKILL) when this process exits, however it exits
 * (`process.exit()` included, which runs no `await`): the parent's half of
 * "children die with their parent" (execa's `cleanup: true`). The child's own
 * half is watching its IPC channel. The entry goes once the child exited.
 *
 * @internal
 */
export function killOnExit(child: ChildProcess): void {
  if (!hooked) {
    hooked = true;
    process.on("exit", killAll);
  }
  children.add(child);
  child.once("exit", () => children.delete(child));
}

function killAll(): void {
  for (const child of children) {
    try {
      // Synchronous: the signal is sent before this process is gone.
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }
  children.clear();
}
