const MIB = 1024 * 1024;

/** Node needs about this much old space (MiB) to boot the runner; smaller limits are raised to it. */
export const MIN_HEAP_MIB = 8;

/** `--permission` where Node has it (22.13+, 23.5+), else Node 20's `--experimental-permission`. */
export function permissionFlag(version: string = process.versions.node): string {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13)
    ? "--permission"
    : "--experimental-permission";
}

/** `memoryLimit` bytes as `--max-old-space-size` MiB: rounded up, at least {@link MIN_HEAP_MIB}. */
export function heapMiB(memoryLimitBytes: number): number {
  return Math.max(MIN_HEAP_MIB, Math.ceil(memoryLimitBytes / MIB));
}

/**
 * The child's argv after `execPath`. The permission model allows reading the
 * runner file only (no other reads, no writes, no child processes, workers,
 * addons or inspector); code generation from strings is off and the
 * intrinsics are frozen in the runner's own realm (a second layer should
 * guest code ever get out of its vm context); `import()` is routed to the
 * runner (which refuses it) by `--experimental-vm-modules`; trace event files
 * (which the permission model does not gate) go to the null device.
 */
export function buildChildArgs(runnerPath: string, memoryLimitBytes: number): string[] {
  return [
    permissionFlag(),
    `--allow-fs-read=${runnerPath}`,
    "--no-addons",
    "--disallow-code-generation-from-strings",
    "--frozen-intrinsics",
    "--experimental-vm-modules",
    "--disable-warning=ExperimentalWarning",
    // node:trace_events is not gated by the permission model and writes node_trace.*.log into the cwd.
    `--trace-event-file-pattern=${process.platform === "win32" ? "NUL" : "/dev/null"}`,
    `--max-old-space-size=${heapMiB(memoryLimitBytes)}`,
    runnerPath,
  ];
}

/** Environment variables that would change the child's own flags or load code into it. */
export function isNodeRuntimeVariable(key: string): boolean {
  return /^NODE_/i.test(key);
}
