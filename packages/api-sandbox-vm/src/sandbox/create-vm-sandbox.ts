import { dirname } from "node:path";
import { formatWithOptions } from "node:util";
import { Worker } from "node:worker_threads";
import { PermissionChecker, type PermissionCode, PermissionError } from "@suaveplan/api-sandbox-permissions";
import type { LogLevel } from "@suaveplan/sandbox-core/types";
import {
  RESIDENT_ALLOWANCE_BYTES,
  watchResidentMemory,
  watchWorkerHeap,
} from "@suaveplan/sandbox-core/worker-memory";
import type { ToolCallRecord } from "@suaveplan/sandbox-tools";
import { SAND_VM_CODES, type SandVmCode, VmSandboxError } from "../errors/sand-vm-codes.js";
import { pluginScriptCache } from "../internal/plugin-script.js";
import type { FromWorker, ToWorker, WorkerInit } from "../internal/protocol.js";
import {
  type DecodedGuestError,
  decodeGuestValue,
  encodeHostValue,
  SANDBOX_RAISED,
} from "../membrane/host-codec.js";
import {
  type CapabilityProxies,
  installCapabilityProxies,
  toCrossingError,
} from "../proxies/install-capability-proxies.js";
import { createVmToolHost, toolCrossingError, type VmToolHost } from "../tools/vm-tool-host.js";
import {
  type ResolvedVmSandboxOptions,
  resolveVmSandboxOptions,
  type VmSandboxOptions,
} from "./vm-sandbox-options.js";
import { vmWorkerUrl } from "./worker-entry-url.js";

/** What this host guarantees, as data (see README "Security notes"). */
export interface VmSandboxCapabilities {
  /** Always `false`: node:vm and worker_threads are defence in depth, not a security boundary. */
  readonly securityBoundary: false;
  /** Where plugin code runs. */
  readonly isolation: "vm-context-in-worker-thread";
  /** Sync loops and microtask loops are stopped after `timeoutMs`; pending promises time out per call. */
  readonly boundsAsyncWork: true;
  /**
   * The worker's heap is capped at `memoryLimitMb`, and its growth in heap plus off-heap memory
   * (array buffers, Wasm memory) is checked against it after every drain and, on node 22.16+ and
   * 24, sampled every 10 ms from the host; exceeding either fails the call and ends the sandbox.
   */
  readonly enforcesMemoryLimit: true;
}

/** A running plugin. Dispose it (or use `await using`). */
export interface VmSandboxHandle extends AsyncDisposable {
  /** The plugin's function exports, callable from the host; arguments and results are copied. */
  readonly exports: Readonly<Record<string, (...args: unknown[]) => Promise<unknown>>>;
  /** Names of the plugin's function exports. */
  readonly exportNames: readonly string[];
  /** What this sandbox enforces. */
  readonly capabilities: VmSandboxCapabilities;
  /** True once `dispose()` was called or the sandbox failed fatally. */
  readonly disposed: boolean;
  /**
   * Call export `name` with copies of `args`; resolves a copy of its (awaited) result. Rejects with
   * `SAND_VM_TIMEOUT` after `timeoutMs`, `SAND_VM_PLUGIN_THREW` (or the guest error's own
   * `SAND_VM_*`/`PERMISSION_*` code) when the plugin throws, `SAND_VM_DISPOSED` after dispose.
   */
  call(name: string, ...args: unknown[]): Promise<unknown>;
  /**
   * The journal: every `tools.<name>(…)` call the plugin made so far, in call order (copies) —
   * `{ id, tool, input, output | error, ok, status, durationMs }`, the facade's `ToolCallRecord`.
   * `status` is `denied` for a call `policy.tools` refused.
   */
  calls(): ToolCallRecord[];
  /** Terminate the worker (releasing the context), reject in-flight calls and proxy calls with `SAND_VM_DISPOSED`. Idempotent: later calls return the same promise. */
  dispose(): Promise<void>;
}

const CAPABILITIES: VmSandboxCapabilities = Object.freeze({
  securityBoundary: false,
  isolation: "vm-context-in-worker-thread",
  boundsAsyncWork: true,
  enforcesMemoryLimit: true,
});
const LOG_LEVELS = new Set<string>(["log", "info", "warn", "error", "debug"]);
const SAND_VM_CODE_SET = new Set<string>(Object.values(SAND_VM_CODES));
/** Node flags of every plugin worker (exported for the code-cache test). */
export const WORKER_FLAGS = ["--experimental-vm-modules", "--disable-warning=ExperimentalWarning"];

interface PendingCall {
  name: string;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
  /** The result the worker posted, final once the drain that produced it ended (`drained`). */
  settled?: { ok: boolean; raised: boolean; payload: string } | { tooLarge: number };
  /** The call's time ran out and the worker was asked whether it is free (`probe`). */
  probing?: boolean;
}

/** How long past a call's timeout the host waits for the worker's answer to a probe, in ms. */
const PROBE_GRACE_MS = 1_000;

function preview(value: unknown): string {
  return formatWithOptions({ depth: 2, breakLength: Number.POSITIVE_INFINITY }, "%O", value).slice(0, 200);
}

/** Turn a value the plugin threw (decoded) into the host error. */
function hostErrorFrom(thrown: unknown, where: string): Error {
  if (thrown instanceof Error) {
    const guest = thrown as DecodedGuestError;
    if (guest[SANDBOX_RAISED] === true && typeof guest.code === "string") {
      if (guest.code.startsWith("PERMISSION_"))
        return new PermissionError(guest.code as PermissionCode, guest.message);
      if (SAND_VM_CODE_SET.has(guest.code)) {
        return new VmSandboxError(guest.code as SandVmCode, guest.message, {
          details: { guestStack: guest.stack ?? "" },
        });
      }
    }
    return new VmSandboxError(SAND_VM_CODES.PLUGIN_THREW, `${where} threw ${guest.name}: ${guest.message}`, {
      cause: guest,
      details: {
        name: guest.name,
        message: guest.message,
        guestStack: guest.stack ?? "",
        ...(typeof guest.code === "string" ? { code: guest.code } : {}),
      },
    });
  }
  return new VmSandboxError(
    SAND_VM_CODES.PLUGIN_THREW,
    `${where} threw a non-error value: ${preview(thrown)}`,
    {
      details: { value: preview(thrown) },
    },
  );
}

function isToolCrossing(value: unknown): value is ReturnType<typeof toolCrossingError> {
  return (
    typeof value === "object" &&
    value !== null &&
    !(value instanceof Error) &&
    (value as { name?: unknown }).name === "ToolError" &&
    typeof (value as { tool?: unknown }).tool === "string"
  );
}

class VmSandbox implements VmSandboxHandle {
  readonly capabilities = CAPABILITIES;
  exports: Readonly<Record<string, (...args: unknown[]) => Promise<unknown>>> = Object.freeze({});
  exportNames: readonly string[] = Object.freeze([]);
  readonly ready: Promise<void>;
  readonly #worker: Worker;
  readonly #options: ResolvedVmSandboxOptions;
  readonly #proxies: CapabilityProxies;
  readonly #tools: VmToolHost;
  readonly #pending = new Map<number, PendingCall>();
  #stopMemoryWatch: () => void = () => {};
  /** The resident-memory valve, held while calls are pending (see `#updateRef`). */
  #stopResidentWatch: (() => void) | undefined;
  /** Calls sent to the worker whose own drain has not ended yet, oldest first. */
  readonly #unacked: number[] = [];
  /** Calls whose result arrived during a drain that has not ended yet. */
  readonly #provisional: number[] = [];
  /** Why the sandbox is gone, once it is (said by every later call). */
  #goneReason: string | undefined;
  #callSeq = 0;
  #loading = true;
  #loadTimer: NodeJS.Timeout | undefined;
  #settleReady: { resolve(): void; reject(error: unknown): void } | undefined;
  #disposal: Promise<void> | undefined;
  #stderrTail = "";

  constructor(
    worker: Worker,
    options: ResolvedVmSandboxOptions,
    proxies: CapabilityProxies,
    tools: VmToolHost,
  ) {
    this.#worker = worker;
    this.#options = options;
    this.#proxies = proxies;
    this.#tools = tools;
    this.ready = new Promise<void>((resolve, reject) => {
      this.#settleReady = { resolve, reject };
    });
    worker.stdout.resume();
    worker.stderr.on("data", (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString("utf8")).slice(-2_000);
    });
    worker.on("message", (message: FromWorker) => {
      // Nothing the plugin sends may throw out of this listener (that would be an uncaught
      // exception in the host process): a payload that cannot be handled ends this sandbox only.
      try {
        this.#onMessage(message);
      } catch (error) {
        this.#fail(
          error instanceof VmSandboxError
            ? error
            : new VmSandboxError(
                SAND_VM_CODES.WORKER_FAILED,
                "the sandbox sent a message the host could not handle",
                {
                  cause: error,
                },
              ),
        );
      }
    });
    worker.on("error", (error: Error) => {
      const code = (error as { code?: unknown }).code;
      this.#fail(
        code === "ERR_WORKER_OUT_OF_MEMORY"
          ? new VmSandboxError(
              SAND_VM_CODES.MEMORY_EXCEEDED,
              `the plugin exceeded the sandbox heap limit of ${options.memoryLimitMb} MiB; the sandbox was disposed`,
            )
          : new VmSandboxError(SAND_VM_CODES.WORKER_FAILED, `the sandbox worker crashed: ${error.message}`, {
              cause: error,
            }),
      );
    });
    worker.on("exit", (exitCode) => {
      if (this.#disposal === undefined) {
        const tail = this.#stderrTail.trim();
        this.#fail(
          new VmSandboxError(
            SAND_VM_CODES.WORKER_FAILED,
            `the sandbox worker exited unexpectedly with code ${exitCode}`,
            {
              details: tail === "" ? { exitCode } : { exitCode, stderr: tail },
            },
          ),
        );
      }
    });
  }

  get disposed(): boolean {
    return this.#disposal !== undefined;
  }

  call(name: string, ...args: unknown[]): Promise<unknown> {
    if (this.#disposal !== undefined) {
      return Promise.reject(
        new VmSandboxError(
          SAND_VM_CODES.DISPOSED,
          `cannot call ${JSON.stringify(name)}: the sandbox is disposed${this.#goneReason === undefined ? "" : ` (${this.#goneReason})`}`,
        ),
      );
    }
    if (!this.exportNames.includes(name)) {
      return Promise.reject(
        new VmSandboxError(
          SAND_VM_CODES.EXPORT_NOT_FOUND,
          `the plugin has no function export ${JSON.stringify(name)}`,
          {
            details: { name, exports: [...this.exportNames] },
          },
        ),
      );
    }
    let payload: string;
    try {
      payload = encodeHostValue(args, "args");
    } catch (error) {
      return Promise.reject(error);
    }
    const id = ++this.#callSeq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.#onCallTimeout(id), this.#options.timeoutMs);
      this.#pending.set(id, { name, resolve, reject, timer });
      this.#unacked.push(id);
      this.#updateRef();
      this.#post({ t: "call", id, name, payload });
    });
  }

  /**
   * A call's time ran out. Whether it is only waiting (a promise that never settles: this call
   * fails, the sandbox goes on) or its code still runs (the worker's watchdog stops it and the
   * `fatal` lands on this call) only the worker knows: ask it. It answers `probe` once it is free.
   */
  #onCallTimeout(id: number): void {
    const call = this.#pending.get(id);
    if (call === undefined || this.#disposal !== undefined) return;
    if (call.probing === true) {
      // No answer within the grace: the worker is busy with other calls' work; this one is late.
      this.#rejectUnsettled(id);
      return;
    }
    call.probing = true;
    call.timer = setTimeout(() => this.#onCallTimeout(id), this.#options.timeoutMs + PROBE_GRACE_MS);
    this.#post({ t: "probe", id });
  }

  /** Reject a call that is still waiting after its timeout with `SAND_VM_TIMEOUT`; the sandbox stays usable. */
  #rejectUnsettled(id: number): void {
    const call = this.#pending.get(id);
    if (call === undefined || call.settled !== undefined) return;
    clearTimeout(call.timer);
    this.#pending.delete(id);
    this.#post({ t: "forget", id });
    this.#updateRef();
    call.reject(
      new VmSandboxError(
        SAND_VM_CODES.TIMEOUT,
        `plugin export ${JSON.stringify(call.name)} did not settle within ${this.#options.timeoutMs} ms`,
        {
          details: { name: call.name, timeoutMs: this.#options.timeoutMs },
        },
      ),
    );
  }

  /** Hand a call its result (the drain that produced it has ended). */
  #deliver(id: number): void {
    const call = this.#pending.get(id);
    const settled = call?.settled;
    if (call === undefined || settled === undefined) return;
    this.#pending.delete(id);
    clearTimeout(call.timer);
    this.#updateRef();
    if ("tooLarge" in settled) {
      const limit = this.#options.maxOutputBytes;
      call.reject(
        new VmSandboxError(
          SAND_VM_CODES.OUTPUT_EXCEEDED,
          `plugin export ${JSON.stringify(call.name)} returned ${settled.tooLarge} bytes, more than maxOutputBytes (${limit}); the sandbox goes on`,
          { details: { name: call.name, bytes: settled.tooLarge, maxOutputBytes: limit } },
        ),
      );
      return;
    }
    try {
      const value = decodeGuestValue(settled.payload, settled.raised);
      if (settled.ok) call.resolve(value);
      else call.reject(hostErrorFrom(value, `plugin export ${JSON.stringify(call.name)}`));
    } catch (error) {
      call.reject(error);
    }
  }

  calls(): ToolCallRecord[] {
    return this.#tools.calls();
  }

  dispose(): Promise<void> {
    if (this.#disposal === undefined) {
      this.#disposal = this.#teardown(new VmSandboxError(SAND_VM_CODES.DISPOSED, "the sandbox was disposed"));
    }
    return this.#disposal;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }

  #teardown(reason: Error): Promise<void> {
    this.#loading = false;
    this.#stopMemoryWatch();
    this.#watchResidentMemory(false);
    clearTimeout(this.#loadTimer);
    this.#settleReady?.reject(reason);
    for (const call of this.#pending.values()) {
      clearTimeout(call.timer);
      call.reject(reason);
    }
    this.#pending.clear();
    this.#proxies.dispose();
    this.#tools.dispose();
    return this.#worker.terminate().then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * A fatal failure: the calls that caused it reject with `error` — `cause` (the call whose drain
   * failed, when the worker knows it), else the calls whose results came from the failing drain
   * and the oldest call whose own drain had not ended — and every other call in flight rejects
   * with `SAND_VM_DISPOSED` saying why; then the sandbox is disposed. Later calls say why too.
   */
  #fail(error: Error, cause: number | null = null): void {
    if (this.#disposal !== undefined) return;
    const culprits = new Set<number>();
    if (cause !== null && this.#pending.has(cause)) culprits.add(cause);
    else {
      for (const id of this.#provisional) culprits.add(id);
      const oldest = this.#unacked.find((id) => this.#pending.has(id));
      if (oldest !== undefined) culprits.add(oldest);
    }
    if (culprits.size === 0 && this.#pending.size === 1)
      for (const id of this.#pending.keys()) culprits.add(id);
    const blamed = [...culprits].map((id) => this.#pending.get(id)?.name).filter((n) => n !== undefined);
    const code = String((error as { code?: unknown }).code ?? error.name);
    const what = error.message
      .replace(/ \([A-Z_]+\); see .*$/s, "")
      .replace(/; the sandbox was disposed$/, "");
    this.#goneReason =
      blamed.length > 0
        ? `it failed with ${code} during plugin export ${JSON.stringify(blamed[0])}: ${what}`
        : `it failed with ${code}: ${what}`;
    const gone = new VmSandboxError(
      SAND_VM_CODES.DISPOSED,
      `the sandbox was disposed while this call waited, because ${this.#goneReason}`,
      { cause: error },
    );
    for (const [id, call] of this.#pending) {
      if (culprits.has(id)) continue;
      clearTimeout(call.timer);
      this.#pending.delete(id);
      call.reject(gone);
    }
    this.#disposal = this.#teardown(error);
  }

  #post(message: ToWorker): void {
    if (this.#disposal === undefined) this.#worker.postMessage(message);
  }

  /** Keep the process alive only while something waits on the plugin. */
  #updateRef(): void {
    if (this.#disposal !== undefined) return;
    if (this.#loading || this.#pending.size > 0 || this.#proxies.inFlight > 0 || this.#tools.inFlight > 0)
      this.#worker.ref();
    else this.#worker.unref();
    this.#watchResidentMemory(this.#pending.size > 0);
  }

  /**
   * While calls are pending, the process's resident memory stands behind the worker's own checks:
   * a plugin that takes array buffers without yielding (which node 20 cannot sample from the host)
   * is ended once the process grew by more than the limit plus the allowance since the calls began.
   */
  #watchResidentMemory(busy: boolean): void {
    if (busy && this.#stopResidentWatch === undefined) {
      const limitMb = this.#options.memoryLimitMb;
      this.#stopResidentWatch = watchResidentMemory(this.#worker, limitMb * 1024 * 1024, (grown) =>
        this.#fail(
          new VmSandboxError(
            SAND_VM_CODES.MEMORY_EXCEEDED,
            `the process's resident memory grew by ${grown} bytes while the plugin ran without yielding, past the sandbox limit of ${limitMb} MiB plus ${RESIDENT_ALLOWANCE_BYTES / 1024 / 1024} MiB; the sandbox was disposed`,
          ),
        ),
      );
    } else if (!busy && this.#stopResidentWatch !== undefined) {
      this.#stopResidentWatch();
      this.#stopResidentWatch = undefined;
    }
  }

  #onMessage(message: FromWorker): void {
    if (this.#disposal !== undefined) return;
    switch (message.t) {
      case "started":
        this.#loadTimer = setTimeout(() => {
          this.#fail(
            new VmSandboxError(
              SAND_VM_CODES.TIMEOUT,
              `the plugin did not finish loading within ${this.#options.timeoutMs} ms`,
              {
                details: { timeoutMs: this.#options.timeoutMs },
              },
            ),
          );
        }, this.#options.timeoutMs);
        return;
      case "ready": {
        clearTimeout(this.#loadTimer);
        this.#loading = false;
        const decoded = decodeGuestValue(message.payload);
        const names = Array.isArray(decoded)
          ? decoded.filter((name): name is string => typeof name === "string")
          : [];
        this.exportNames = Object.freeze(names);
        const exports: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
        for (const name of names) exports[name] = (...args: unknown[]) => this.call(name, ...args);
        this.exports = Object.freeze(exports);
        this.#updateRef();
        // Off-heap memory is sampled from the host too where node can read a busy worker.
        const limitBytes = this.#options.memoryLimitMb * 1024 * 1024;
        this.#stopMemoryWatch = watchWorkerHeap(this.#worker, limitBytes, (grown) =>
          this.#fail(
            new VmSandboxError(
              SAND_VM_CODES.MEMORY_EXCEEDED,
              `the plugin's memory (heap and array buffers) grew by ${grown} bytes, past the sandbox limit of ${this.#options.memoryLimitMb} MiB; the sandbox was disposed`,
            ),
          ),
        );
        this.#settleReady?.resolve();
        return;
      }
      case "load-failed":
        this.#fail(
          new VmSandboxError(
            message.error.code,
            message.error.message,
            message.error.details ? { details: message.error.details } : {},
          ),
        );
        return;
      case "load-threw":
        this.#fail(hostErrorFrom(decodeGuestValue(message.payload, message.raised), "the plugin module"));
        return;
      case "result": {
        const call = this.#pending.get(message.id);
        if (call === undefined || call.settled !== undefined) return;
        call.settled = { ok: message.ok, raised: message.raised, payload: message.payload };
        this.#provisional.push(message.id);
        return;
      }
      case "result-too-large": {
        const call = this.#pending.get(message.id);
        if (call === undefined || call.settled !== undefined) return;
        call.settled = { tooLarge: message.bytes };
        this.#provisional.push(message.id);
        return;
      }
      case "drained": {
        if (message.cause !== null) {
          const at = this.#unacked.indexOf(message.cause);
          if (at !== -1) this.#unacked.splice(at, 1);
        }
        for (const id of this.#provisional.splice(0)) this.#deliver(id);
        return;
      }
      case "probe":
        this.#rejectUnsettled(message.id);
        return;
      case "cap":
        this.#onCapability(message.id, message.op, message.payload);
        return;
      case "log":
        this.#onLog(message.level, message.payload);
        return;
      case "fatal":
        this.#fail(new VmSandboxError(message.error.code, message.error.message), message.cause);
        return;
    }
  }

  #onCapability(id: number, op: string, payload: string): void {
    const isTool = op === "tools.call";
    let args: unknown[];
    try {
      args = decodeGuestValue(payload) as unknown[];
    } catch (error) {
      this.#post({ t: "cap.result", id, ok: false, payload: encodeHostValue(toCrossingError(error)) });
      return;
    }
    if (!Array.isArray(args)) args = [];
    const tool = isTool ? String(args[0]) : "";
    const crossing = isTool ? (error: unknown) => toolCrossingError(error, tool) : toCrossingError;
    const running = isTool ? this.#tools.call(args[0], args[1]) : this.#proxies.call(op, args);
    running
      .finally(() => this.#updateRef())
      .then(
        (value) => {
          let encoded: string;
          try {
            encoded = encodeHostValue(value);
          } catch (error) {
            this.#post({ t: "cap.result", id, ok: false, payload: encodeHostValue(crossing(error)) });
            return;
          }
          this.#post({ t: "cap.result", id, ok: true, payload: encoded });
        },
        (error: unknown) => {
          // The tool host rejects with ready crossing data; a capability proxy with an error.
          const wire = isTool && isToolCrossing(error) ? error : crossing(error);
          this.#post({ t: "cap.result", id, ok: false, payload: encodeHostValue(wire) });
        },
      );
    this.#updateRef();
  }

  #onLog(level: string, text: string): void {
    // The line was formatted in the guest (the kernel's inspect) and cut to the copy limit there.
    this.#options.onLog?.({ level: (LOG_LEVELS.has(level) ? level : "log") as LogLevel, message: text });
  }
}

/**
 * Start a plugin host: a worker thread (with `--experimental-vm-modules`) holding one frozen
 * `vm` context that loads `pluginModulePath` as an ES module. Resolves once the module graph is
 * evaluated and its exports are known.
 *
 * @throws VmSandboxError `SAND_VM_INVALID_OPTIONS`, `SAND_VM_MODULE_IMPORT_FORBIDDEN`,
 *   `SAND_VM_MODULE_LOAD_FAILED`, `SAND_VM_PLUGIN_THREW` (or a guest error's own code), `SAND_VM_TIMEOUT`;
 *   PermissionError `PERMISSION_INVALID_POLICY`.
 */
export async function createVmSandbox(options: VmSandboxOptions): Promise<VmSandboxHandle> {
  const resolved = resolveVmSandboxOptions(options);
  const checker =
    resolved.policy instanceof PermissionChecker
      ? resolved.policy
      : new PermissionChecker(resolved.policy, {
          cwd: dirname(resolved.pluginModulePath),
          ...(resolved.meterProvider === undefined ? {} : { meterProvider: resolved.meterProvider }),
        });
  const tools = createVmToolHost({ checker, tools: resolved.tools });
  const proxies = installCapabilityProxies({ checker, proxies: resolved.proxies });
  const init: WorkerInit = {
    pluginModulePath: resolved.pluginModulePath,
    timeoutMs: resolved.timeoutMs,
    capabilities: [...proxies.installed],
    tools: [...tools.names],
    maxOutputBytes: resolved.maxOutputBytes ?? null,
    memoryLimitBytes: resolved.memoryLimitMb * 1024 * 1024,
    kernelCache: pluginScriptCache(),
  };
  const worker = new Worker(vmWorkerUrl(), {
    workerData: init,
    execArgv: WORKER_FLAGS,
    env: {},
    stdout: true,
    stderr: true,
    resourceLimits: { maxOldGenerationSizeMb: resolved.memoryLimitMb },
  });
  const sandbox = new VmSandbox(worker, resolved, proxies, tools);
  try {
    await sandbox.ready;
  } catch (error) {
    await sandbox.dispose();
    throw error;
  }
  return sandbox;
}
