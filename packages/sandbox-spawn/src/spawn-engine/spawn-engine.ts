import type { SpawnOptions } from "node:child_process";
import { dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { memoryLimitBelowMinimum } from "@suaveplan/sandbox-core/schemas";
import { SparePool } from "@suaveplan/sandbox-core/spares";
import {
  type EngineCapabilities,
  failure,
  type LogEntry,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import {
  answerCall,
  type EngineRun,
  EngineShell,
  type ExecutionRequest,
  type GuestOutcome,
  newKernelBinding,
  type ReadyRequest,
  toSandboxResult,
} from "@suaveplan/sandbox-guest";
import { closeWithin, holdOpen, killNow, treeOf } from "../internal/child-control.js";
import {
  CHILD_MEMORY_ALLOWANCE_BYTES,
  CHILD_MEMORY_SAMPLE_MS,
  HOST_READS_CHILD_MEMORY,
  readResidentBytes,
  readTreeResidentBytes,
} from "../internal/child-memory.js";
import {
  buildChildArgs,
  cpuLimitSeconds,
  heapMiB,
  MIN_HEAP_MIB,
  withCpuLimit,
} from "../internal/node-args.js";
import {
  type ChildConfinement,
  type ConfinedCommand,
  type ResolvedSpawnOptions,
  resolveSpawnOptions,
  type SpawnEngineOptions,
} from "../internal/spawn-options.js";
import { type ChildCalls, type ChildOutcome, raceChild, type SpawnedChild } from "./race-child.js";
import { toGuestOutcome } from "./to-guest-outcome.js";

const offHeap = HOST_READS_CHILD_MEMORY ? "sampled" : false;
const ALLOWANCE_MIB = CHILD_MEMORY_ALLOWANCE_BYTES / (1024 * 1024);

/**
 * What the spawn engine guarantees — and what it does not. `memoryAccounting`
 * depends on the host: where it can read a child's resident memory (Linux
 * `/proc`, detected) everything the child allocates is sampled; elsewhere
 * only the V8 heap is capped.
 */
export const SPAWN_CAPABILITIES: EngineCapabilities = Object.freeze({
  securityBoundary: false,
  tier: "child process under the Node permission model (reads only the runner file; no writes, child processes, workers or addons; network not restricted) — a security boundary only when also confined by the OS (e.g. dsh-sandbox-local)",
  enforcesMemoryLimit: true,
  boundsAsyncWork: true,
  streamsLogs: true,
  abortsRunningCode: true,
  measuresCpu: "entries",
  memoryAccounting: Object.freeze({
    kinds: Object.freeze({
      heap: "allocation",
      strings: "allocation",
      arrayBuffers: offHeap,
      sharedArrayBuffers: offHeap,
      wasmMemory: offHeap,
    }),
    ...(HOST_READS_CHILD_MEMORY
      ? { sampleIntervalMs: CHILD_MEMORY_SAMPLE_MS, allowanceBytes: CHILD_MEMORY_ALLOWANCE_BYTES }
      : {}),
    exactness: HOST_READS_CHILD_MEMORY
      ? `The child's V8 heap (strings included) is capped by --max-old-space-size; its resident memory is sampled from the host every ${CHILD_MEMORY_SAMPLE_MS} ms, also while guest code runs synchronously, and may grow by memoryLimit plus ${ALLOWANCE_MIB} MiB for node itself: a run can overshoot that by what it allocates in ${CHILD_MEMORY_SAMPLE_MS} ms (or, when the host's own event loop is late, until the next sample). A run the runner finishes (with a value, a throw or its own deadline) is also held to the kernel's peak resident memory of its node process (getrusage), so a peak between two samples still ends it with MEMORY_EXCEEDED.`
      : "The child's V8 heap (strings included) is capped by --max-old-space-size; array buffers and Wasm memory are not counted (this host offers no way to read a child's memory).",
  }),
} satisfies EngineCapabilities);

interface LiveChild {
  readonly child: SpawnedChild;
  /** `--max-old-space-size` the child was started with, in MiB. */
  readonly heapMiB: number;
  /** Resolves once the child closed (exited and its pipes ended), or its spawn failed. */
  readonly closed: Promise<void>;
  /** Exited, errored or already used: never hand it out (again). */
  dead: boolean;
}

const MAX_STDERR_BYTES = 16 * 1024;
/**
 * How long after one spare was spawned the next may be, in ms: a child's boot
 * takes a core for about 60–90 ms, and several at once would take the cores
 * from the runs they are for.
 */
const SPARE_SPACING_MS = 100;
const STDIO: SpawnOptions["stdio"] = ["pipe", "ignore", "pipe", "pipe"];

/**
 * Runs JavaScript in a fresh Node.js child process per execution, on the
 * shared guest runtime (`@suaveplan/sandbox-guest`): the same kernel, codec,
 * console formatting and error codes as every other engine, run by the
 * child's runner in a `node:vm` realm. A security boundary only when the
 * child is also confined by the OS.
 *
 * The child runs `runner-main.js` under the Node permission model with a
 * sanitised environment and a V8 heap limit (`memoryLimit` →
 * `--max-old-space-size`); where the host can read the child's resident
 * memory (Linux), everything else it allocates — array buffers, Wasm memory —
 * is sampled against `memoryLimit` too (see `capabilities.memoryAccounting`). The request goes over stdin as JSON; console lines
 * (as they are written) and the outcome come back as JSON frames on a
 * dedicated pipe (fd 3) the guest cannot reach. The timeout kills the child
 * with SIGKILL, and so does `options.signal`, even while the guest loops.
 * `options.hostCalls` are answered in the host: each `tools.<name>(input)`
 * arrives as a `call` frame and its reply goes back as a line on stdin.
 * Pre-started children are kept ready (each is used once), so the boot of a
 * Node process is not on the caller's path: as many as the most runs in flight
 * at once lately, between one and `maxSpares`.
 *
 * @example
 * await using engine = new SpawnEngine({ timeout: 1000 });
 * const { result } = await engine.execute("2 + 3"); // 5
 */
export class SpawnEngine extends EngineShell {
  /** Always `"spawn"`. */
  readonly name = "spawn" as const;
  /**
   * See {@link SPAWN_CAPABILITIES}; with `confinement` whose backend enforces
   * fully, a security boundary ({@link confinedCapabilities}).
   */
  readonly capabilities: EngineCapabilities;

  private readonly options: ResolvedSpawnOptions;
  /** Every child started and not yet closed: the spares and the running ones. */
  private readonly children = new Set<LiveChild>();
  /** Pre-started children (see {@link SparePool}), spawned {@link SPARE_SPACING_MS} apart. */
  private readonly spares: SparePool<LiveChild>;
  private spareMemoryLimit: number;

  /**
   * @throws SandboxError `SANDBOX_INVALID_CONFIG` when an option is malformed,
   * or when the default runner script is missing (build the package).
   */
  constructor(options: SpawnEngineOptions = {}) {
    const resolved = resolveSpawnOptions(options);
    super("SpawnEngine", resolved.limits);
    this.options = resolved;
    this.capabilities = confinedCapabilities(this.options.confinement);
    this.spareMemoryLimit = this.limits.memoryLimit;
    this.spares = new SparePool<LiveChild>(
      {
        start: () => this.startSpare(),
        retire: (spare) => {
          spare.dead = true;
          killNow(spare.child);
        },
        alive: (spare) => !spare.dead,
      },
      { maxSpares: this.options.maxSpares, spacingMs: SPARE_SPACING_MS },
    );
    this.spares.refillAfter(0);
  }

  /** Absolute path of the runner script each child runs (the only file it may read). */
  getRunnerPath(): string {
    return this.options.runnerPath;
  }

  /** A copy of the environment every child receives: sanitised, and without `NODE_*` variables. */
  getSanitisedEnv(): Record<string, string> {
    return { ...this.options.childEnv };
  }

  /**
   * Run one request in a fresh child process. Results beyond the guest's
   * own: `SANDBOX_MEMORY_EXCEEDED`, the child's failures
   * (`SANDBOX_SPAWN_FAILED`); an abort SIGKILLs the child, even while the
   * guest loops.
   */
  protected start(ready: ReadyRequest, startedAt: number): EngineRun | SandboxResult {
    const { request, memoryLimit } = ready;
    const tooSmall = memoryLimitBelowMinimum(memoryLimit, "options.memoryLimit", "spawn", MIN_HEAP_MIB);
    if (tooSmall !== undefined) return failure(SANDBOX_CODES.INVALID_OPTIONS, tooSmall);
    let entry: LiveChild;
    try {
      entry = this.takeSpare(memoryLimit) ?? this.spawnChild(memoryLimit, false);
    } catch (error) {
      return failure(
        SANDBOX_CODES.SPAWN_FAILED,
        `Could not start the child process ${this.options.execPath}: ${error instanceof Error ? error.message : String(error)}. Check execPath and the spawner`,
      );
    }
    entry.dead = true; // single use
    this.spares.started();
    holdOpen(entry.child, true);
    this.spareMemoryLimit = memoryLimit;
    // What ended the run early (a cancel, destroy()); raceChild kills the child for either.
    const stop = new AbortController();
    let stoppedWith: GuestOutcome | undefined;
    return {
      abort: (outcome) => {
        stoppedWith ??= outcome;
        stop.abort();
      },
      result: this.race(entry, ready, stop.signal).then(({ ended, logs, crossed }) => {
        this.spares.ended();
        this.spares.refillAfter(0);
        const outcome =
          ended.kind === "cancelled" && stoppedWith !== undefined
            ? stoppedWith
            : toGuestOutcome(ended, {
                timeoutMs: request.timeoutMs,
                memoryLimit,
                startTimeoutMs: this.options.startTimeout,
                execPath: this.options.execPath,
                destroyed: this.destroyed,
              });
        const answered = ended.kind === "ok" ? ended : undefined;
        return toSandboxResult(outcome, {
          duration: performance.now() - startedAt,
          logs,
          memoryUsed: answered?.memoryUsed,
          cpuMs: answered?.cpuMs,
          toolCalls: answered?.toolCalls ?? crossed.calls,
          toolBytes: answered?.toolBytes ?? crossed.bytes,
          faultCode: SANDBOX_CODES.SPAWN_FAILED,
        });
      }),
    };
  }

  /** Hand the request to `entry`'s child and wait until it answered or was ended. */
  private async race(
    entry: LiveChild,
    { request, memoryLimit, onLog, hostCalls }: ReadyRequest,
    signal: AbortSignal,
  ): Promise<{ ended: ChildOutcome; logs: LogEntry[]; crossed: { calls: number; bytes: number } }> {
    const logs: LogEntry[] = [];
    // What crossed, as the host saw it: the usage of a run that ended without the child's done frame.
    const crossed = { calls: 0, bytes: 0 };
    let racing = true;
    const calls: ChildCalls | undefined =
      hostCalls === undefined
        ? undefined
        : {
            names: hostCalls.names,
            maxCallBytes: request.maxCallBytes,
            async answer(call) {
              crossed.calls++;
              crossed.bytes += call.text.length * 2;
              const reply = await answerCall(call, hostCalls);
              if (racing) crossed.bytes += reply.text.length * 2;
              return reply;
            },
          };
    const ended = await raceChild(entry.child, {
      input: `${JSON.stringify(request)}\n`,
      timeoutMs: request.timeoutMs,
      startTimeoutMs: this.options.startTimeout,
      maxProtocolBytes: maxProtocolBytes(request),
      maxStderrBytes: MAX_STDERR_BYTES,
      calls,
      signal,
      memory: HOST_READS_CHILD_MEMORY
        ? {
            limitBytes: memoryLimit + CHILD_MEMORY_ALLOWANCE_BYTES,
            intervalMs: CHILD_MEMORY_SAMPLE_MS,
            // A confined child is a process tree (bwrap, the launcher, node): count all of it, and
            // remember who was in it, so that a kill finds them even after they left it.
            read:
              this.options.confinement === undefined
                ? readResidentBytes
                : (pid) => readTreeResidentBytes(pid, treeOf(entry.child)),
          }
        : undefined,
      onLog: (log) => {
        logs.push(log);
        try {
          onLog?.(log);
        } catch {
          // A throwing host callback must not end the execution.
        }
      },
    });
    racing = false;
    return { ended, logs, crossed };
  }

  /**
   * Kill the pre-started children and wait until every child is gone — at
   * most a few seconds each: a child whose pipes a process outside its tree
   * still holds has the host's ends closed instead.
   */
  protected async dispose(): Promise<void> {
    this.spares.close(); // the spares are in `children` too: killed and awaited with the rest below
    const children = [...this.children];
    for (const entry of children) {
      entry.dead = true;
      // Re-ref the (possibly unref'd spare) child so the event loop stays alive until it has closed;
      // otherwise `await engine.destroy()` at the end of a script ends the process with exit code 13.
      holdOpen(entry.child, true);
      killNow(entry.child);
    }
    // Bounded: a process that left the child's tree may hold its pipes open (closeWithin).
    await Promise.all(children.map((entry) => closeWithin(entry.child, entry.closed)));
  }

  /**
   * The oldest live spare with this heap, else none. Spares of another heap
   * are killed: the next ones are made for the budget this call asked for.
   */
  private takeSpare(memoryLimit: number): LiveChild | undefined {
    const heap = heapMiB(memoryLimit);
    this.spares.discard((spare) => spare.heapMiB !== heap);
    return this.spares.take(() => true);
  }

  /** Start a child; `warmUp` false for one a caller already waits for (see `NO_WARM_UP_FLAG`). */
  private spawnChild(memoryLimit: number, warmUp: boolean): LiveChild {
    const { spawner, execPath, runnerPath, childEnv, cpuLimiter } = this.options;
    // Made for the engine's timeout: a run with a longer one keeps node's watchdog per entry (see the runner).
    const cpuSeconds = cpuLimiter === undefined ? undefined : cpuLimitSeconds(this.limits.timeout);
    const args = buildChildArgs(runnerPath, memoryLimit, {
      cpuSeconds,
      kernelBinding: newKernelBinding(),
      warmUp,
    });
    const start =
      cpuLimiter === undefined || cpuSeconds === undefined
        ? { command: execPath, args }
        : withCpuLimit(cpuLimiter, cpuSeconds, execPath, args);
    const confined = this.confine([start.command, ...start.args]);
    const [command = start.command, ...confinedArgs] = confined?.argv ?? [start.command, ...start.args];
    let child: SpawnedChild;
    try {
      child = spawner(command, confinedArgs, {
        stdio: STDIO,
        env: confined?.env === undefined ? childEnv : { ...childEnv, ...confined.env },
        // Not the host's working directory: bwrap hands its cwd to the child as PWD.
        ...(process.platform === "win32" ? {} : { cwd: "/" }),
        windowsHide: true,
      });
    } catch (error) {
      confined?.dispose?.();
      throw error;
    }
    const entry: LiveChild = {
      child,
      heapMiB: heapMiB(memoryLimit),
      dead: false,
      closed: new Promise<void>((resolveClosed) => {
        const markDead = (): void => {
          entry.dead = true;
        };
        child.on("exit", markDead);
        child.on("error", markDead); // also keeps a failed spawn from throwing as an unhandled 'error'
        child.on("close", () => {
          entry.dead = true;
          this.children.delete(entry);
          resolveClosed();
        });
      }),
    };
    // What the confinement holds for this child (a temp area, a proxy lease) goes once it closed.
    if (confined?.dispose !== undefined) void entry.closed.then(() => confined.dispose?.());
    // A pipe error must never surface as an unhandled 'error' in the host; the child's exit tells the story.
    for (let fd = 0; fd < child.stdio.length; fd++) child.stdio[fd]?.on("error", ignore);
    this.children.add(entry);
    return entry;
  }

  /**
   * The child's command confined by `options.confinement` (read-only, in the runner's directory;
   * the network must be cut), or undefined without one. Throws what stops the child from starting.
   */
  private confine(argv: string[]): ConfinedCommand | undefined {
    const { confinement, runnerPath } = this.options;
    if (confinement === undefined) return undefined;
    const confined = confinement.confine(argv, { mode: "read-only", workspaceRoot: dirname(runnerPath) });
    if (confined.network !== "deny") {
      confined.dispose?.();
      throw new Error(
        `the confinement keeps the network (${String(confined.network)}); construct the provider with network: "deny"`,
      );
    }
    return confined;
  }

  /** Spawn a spare for the pool; none after {@link destroy} or when the child cannot be spawned. */
  private startSpare(): LiveChild | undefined {
    if (this.destroyed) return undefined;
    try {
      // With several runs in flight a spare is taken soon, and its warm-up's CPU comes out of
      // those runs: only an engine serving one run at most warms its spares (as the worker engine).
      const entry = this.spawnChild(this.spareMemoryLimit, this.spares.running <= 1);
      holdOpen(entry.child, false); // an idle spare never keeps the host alive
      return entry;
    } catch {
      return undefined; // the next execute spawns its own child and reports the failure
    }
  }
}

/**
 * fd 3 bytes tolerated from one child before it is treated as broken: the
 * `done` frame (codec text of at most `maxResultBytes` / 2 characters, or an
 * error record bounded by the child's heap, each character at most 6 bytes
 * once escaped into JSON) plus the console budget escaped the same way and a
 * frame's overhead per line. `call` frames share this budget (each one's
 * input is also bounded by `maxCallBytes`, checked by `raceChild`).
 */
function maxProtocolBytes(request: ExecutionRequest): number {
  return 6 * request.maxResultBytes + 6 * request.maxOutputSize + 64 * request.maxLogLines + 64 * 1024;
}

function ignore(): void {}

/**
 * The engine's capabilities with `confinement`: a security boundary when the
 * provider's selected backend enforces fully (bwrap, Landlock with the network
 * cut), otherwise what {@link SPAWN_CAPABILITIES} says. A provider with no
 * usable backend leaves them as they are: no child starts then.
 */
export function confinedCapabilities(confinement: ChildConfinement | undefined): EngineCapabilities {
  if (confinement === undefined) return SPAWN_CAPABILITIES;
  let backend: { backend: string; enforcement?: string | undefined };
  try {
    backend = confinement.selectedBackend();
  } catch {
    return SPAWN_CAPABILITIES;
  }
  if (backend.enforcement !== "full") return SPAWN_CAPABILITIES;
  return Object.freeze({
    ...SPAWN_CAPABILITIES,
    securityBoundary: true,
    tier: `child process under the Node permission model, confined by the OS (${backend.backend}, full enforcement: read-only file system, no network) — a security boundary`,
  });
}
