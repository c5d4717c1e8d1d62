const MIB = 1024 * 1024;

/** Node needs about this much old space (MiB) to boot the runner; smaller limits are refused (`memoryLimitBelowMinimum`). */
export const MIN_HEAP_MIB = 8;

/** `--permission` where Node has it (22.13+, 23.5+), else Node 20's `--experimental-permission`. */
export function permissionFlag(version: string = process.versions.node): string {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > 23 || (major === 23 && minor >= 5) || (major === 22 && minor >= 13)
    ? "--permission"
    : "--experimental-permission";
}

/** `memoryLimit` bytes as `--max-old-space-size` MiB: rounded up (never down, so a run never gets less than asked). */
export function heapMiB(memoryLimitBytes: number): number {
  return Math.ceil(memoryLimitBytes / MIB);
}

/** What a child is told beyond its heap (see {@link buildChildArgs}). */
export interface ChildArgOptions {
  /** The OS CPU-time limit it runs under, in seconds. */
  cpuSeconds?: number | undefined;
  /** Its kernel's binding name (`newKernelBinding()`, see {@link KERNEL_BINDING_FLAG}). */
  kernelBinding?: string | undefined;
  /** False: answer the request without the warm-up run first (see {@link NO_WARM_UP_FLAG}). */
  warmUp?: boolean | undefined;
}

/**
 * The child's argv after `execPath`. The permission model allows reading the
 * runner file only (no other reads, no writes, no child processes, workers,
 * addons or inspector); code generation from strings is off and the
 * intrinsics are frozen in the runner's own realm (a second layer should
 * guest code ever get out of its vm context); `import()` is routed to the
 * runner (which refuses it) by `--experimental-vm-modules`; trace event files
 * (which the permission model does not gate) go to the null device. The
 * runner arguments after the script say what {@link ChildArgOptions} asks.
 */
export function buildChildArgs(
  runnerPath: string,
  memoryLimitBytes: number,
  options: ChildArgOptions = {},
): string[] {
  const args = [
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
  if (options.cpuSeconds !== undefined) args.push(`${CPU_LIMIT_FLAG}${options.cpuSeconds}`);
  if (options.kernelBinding !== undefined) args.push(`${KERNEL_BINDING_FLAG}${options.kernelBinding}`);
  if (options.warmUp === false) args.push(NO_WARM_UP_FLAG);
  return args;
}

/**
 * The runner argument naming the kernel's binding (`newKernelBinding()`, made
 * by the host per child): the child then loads no crypto module to make one.
 * Guest code cannot read it (no `process`, no file reads past the runner).
 */
export const KERNEL_BINDING_FLAG = "--suaveplan-kernel-binding=";

/** The kernel binding the runner's argv names, or undefined. */
export function kernelBindingOf(argv: readonly string[]): string | undefined {
  const flag = argv.find((arg) => arg.startsWith(KERNEL_BINDING_FLAG));
  return flag?.slice(KERNEL_BINDING_FLAG.length);
}

/**
 * The runner argument that skips the warm-up run: for a child started for a
 * caller already waiting, and for spares while several runs are in flight
 * (a spare then is taken soon, and the warm-up's CPU comes out of the runs).
 */
export const NO_WARM_UP_FLAG = "--suaveplan-no-warm-up";

/** The runner argument naming the OS CPU-time limit the child runs under, in seconds (see {@link withCpuLimit}). */
export const CPU_LIMIT_FLAG = "--suaveplan-cpu-limit=";

/** The CPU-time limit the runner's argv names, or undefined. */
export function cpuLimitOf(argv: readonly string[]): number | undefined {
  const flag = argv.find((arg) => arg.startsWith(CPU_LIMIT_FLAG));
  const seconds = flag === undefined ? Number.NaN : Number(flag.slice(CPU_LIMIT_FLAG.length));
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : undefined;
}

/**
 * The CPU-time limit (`RLIMIT_CPU`, whole seconds) of a child that runs one
 * execution of `timeoutMs`: four times the timeout (the guest's thread plus
 * V8's GC threads, with room to spare) and 3 s for booting, warming up and
 * exiting (about 0.1 s). It is no timeout — the host's SIGKILL at `timeoutMs` is — but the
 * bound on a child whose host died and never kills it: it ends that child
 * even while guest code spins, which is what lets the runner re-enter guest
 * code after a timer or a tool reply without node's per-entry watchdog thread.
 */
export function cpuLimitSeconds(timeoutMs: number): number {
  // A run within this limit needs no other bound; the runner checks each request against it.
  return Math.ceil((4 * timeoutMs) / 1000) + 3;
}

/**
 * `execPath args` run through util-linux `prlimit`, which sets the CPU-time
 * limit (soft and hard: past it the kernel kills the process) and then execs
 * node in its own place: same pid, same file descriptors, same environment.
 */
export function withCpuLimit(
  limiter: string,
  seconds: number,
  execPath: string,
  args: readonly string[],
): { command: string; args: string[] } {
  return { command: limiter, args: [`--cpu=${seconds}:${seconds}`, "--", execPath, ...args] };
}

/** Environment variables that would change the child's own flags or load code into it. */
export function isNodeRuntimeVariable(key: string): boolean {
  return /^NODE_/i.test(key);
}
