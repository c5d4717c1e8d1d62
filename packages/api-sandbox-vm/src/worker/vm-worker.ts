// Entry of the worker thread that hosts one plugin's vm context (started with
// --experimental-vm-modules). This file is the HOST side inside the worker: it talks to the guest
// only through primitives (see the kernel's `plugin` profile, @suaveplan/sandbox-kernel's
// src/plugin/guest-host-api.ts) and to the main thread by messages.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { types } from "node:util";
import { type Context, constants, createContext, Script, SourceTextModule } from "node:vm";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import type { GuestHostApi } from "@suaveplan/sandbox-kernel";
import { SAND_VM_CODES, type SandVmCode, VmSandboxError } from "../errors/sand-vm-codes.js";
import { PLUGIN_SCRIPT, PLUGIN_SCRIPT_FILENAME } from "../internal/plugin-script.js";
import type { FromWorker, ToWorker, WireError, WorkerInit } from "../internal/protocol.js";
import { threadMemoryBytes } from "../internal/worker-memory.js";
import { PluginModuleLoader } from "../module-loader/plugin-module-loader.js";
import { PLUGIN_URL_PREFIX } from "../module-loader/plugin-url.js";

const apply = Reflect.apply;
const init = workerData as WorkerInit;
if (parentPort === null) throw new Error("vm-worker must run in a worker thread");
const port: MessagePort = parentPort;
const post = (message: FromWorker) => port.postMessage(message);
const wire = (code: SandVmCode, message: string): WireError => ({ code, message });

/** Results of calls the main thread stopped waiting for (timed out) are dropped. */
const forgotten = new Set<number>();

let capabilitySeq = 0;
let broken = false;
/** The call whose message started the running drain (null for other drains). */
let drainCause: number | null = null;

const URL_PARTS = [
  "href",
  "protocol",
  "username",
  "password",
  "host",
  "hostname",
  "port",
  "pathname",
  "search",
  "hash",
] as const;
const urlParts = (url: URL) => {
  const parts: Record<string, string> = { origin: url.origin };
  for (const key of URL_PARTS) parts[key] = url[key];
  return parts;
};
const ok = (value: unknown) => JSON.stringify([true, value ?? null]);

/** The one host function the guest can call (captured in the bootstrap's closure, never exposed). */
function bridge(op: unknown, a: unknown, b: unknown): string | undefined {
  try {
    switch (op) {
      case "result.ok":
      case "result.error":
      case "result.raised": {
        if (typeof a !== "number" || typeof b !== "string") return undefined;
        if (forgotten.delete(a)) return undefined;
        if (init.maxOutputBytes !== null && b.length * 2 > init.maxOutputBytes) {
          post({ t: "result-too-large", id: a, bytes: b.length * 2 });
          return undefined;
        }
        post({ t: "result", id: a, ok: op === "result.ok", raised: op === "result.raised", payload: b });
        return undefined;
      }
      case "loaded.ok":
        if (typeof b === "string") post({ t: "ready", payload: b });
        return undefined;
      case "loaded.error":
      case "loaded.raised":
        if (typeof b === "string") post({ t: "load-threw", raised: op === "loaded.raised", payload: b });
        return undefined;
      case "cap": {
        if (typeof a !== "string" || typeof b !== "string") throw new TypeError("bad capability request");
        const id = ++capabilitySeq;
        post({ t: "cap", id, op: a, payload: b });
        return ok(id);
      }
      case "log":
        if (typeof a === "string" && typeof b === "string") post({ t: "log", level: a, payload: b });
        return undefined;
      case "url.parse": {
        if (typeof a !== "string") throw new TypeError("bad url");
        const base = typeof b === "string" ? b : undefined;
        if (!URL.canParse(a, base)) return ok(null);
        return ok(urlParts(new URL(a, base)));
      }
      case "url.set": {
        if (typeof a !== "string" || typeof b !== "string") throw new TypeError("bad url");
        const [prop, value] = JSON.parse(b) as [string, string];
        const url = new URL(a);
        if (!(URL_PARTS as readonly string[]).includes(prop)) throw new TypeError("bad url property");
        (url as unknown as Record<string, string>)[prop] = String(value);
        return ok(urlParts(url));
      }
      case "usp.parse":
        return ok([...new URLSearchParams(String(a))]);
      case "usp.serialize":
        return ok(new URLSearchParams(JSON.parse(String(a)) as [string, string][]).toString());
      case "crypto.random": {
        const length = Number(a);
        if (!Number.isInteger(length) || length < 0 || length > 65_536) throw new RangeError("bad length");
        return ok(randomBytes(length).toString("base64"));
      }
      case "crypto.uuid":
        return ok(randomUUID());
      case "crypto.digest": {
        if (!["sha1", "sha256", "sha384", "sha512"].includes(String(a))) throw new TypeError("bad digest");
        return ok(
          createHash(String(a))
            .update(Buffer.from(String(b), "base64"))
            .digest("base64"),
        );
      }
      default:
        throw new TypeError(`unknown bridge operation ${String(op)}`);
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : "host operation failed";
    const name =
      error instanceof TypeError ? "TypeError" : error instanceof RangeError ? "RangeError" : "Error";
    return JSON.stringify([false, { code: "ERR_SANDBOX_HOST", message, name }]);
  }
}

/**
 * The vm timeout error may be created in the guest context's realm (it is thrown while the
 * context is entered), so it is recognised by its own `code` data property, not by `instanceof`.
 */
function isTimeout(error: unknown): boolean {
  // Never run plugin code here: a Proxy's traps would execute outside the timed drain.
  if (typeof error !== "object" || error === null || types.isProxy(error)) return false;
  return Object.getOwnPropertyDescriptor(error, "code")?.value === "ERR_SCRIPT_EXECUTION_TIMEOUT";
}

/** What the thread held before the plugin loaded (heap and off-heap). */
const memoryBefore = threadMemoryBytes();

/**
 * After a drain: the plugin's heap and off-heap memory (array buffers, Wasm memory) together may
 * grow by `memoryLimitMb`; past it the call whose drain it was fails and the sandbox is disposed.
 */
function checkMemory(cause: number | null): boolean {
  const grown = threadMemoryBytes() - memoryBefore;
  if (grown <= init.memoryLimitBytes) return true;
  broken = true;
  post({
    t: "fatal",
    error: wire(
      SAND_VM_CODES.MEMORY_EXCEEDED,
      `the plugin's memory (heap and array buffers) grew by ${grown} bytes, past the sandbox limit of ${init.memoryLimitBytes / (1024 * 1024)} MiB; the sandbox was disposed`,
    ),
    cause,
  });
  return false;
}

function fatalTimeout(cause: number | null): void {
  if (broken) return;
  broken = true;
  post({
    t: "fatal",
    error: wire(
      SAND_VM_CODES.TIMEOUT,
      `plugin code ran for more than ${init.timeoutMs} ms without yielding and was stopped; the sandbox was disposed`,
    ),
    cause,
  });
}

async function main(): Promise<void> {
  if (constants?.DONT_CONTEXTIFY === undefined || typeof SourceTextModule !== "function") {
    post({
      t: "load-failed",
      error: wire(
        SAND_VM_CODES.UNSUPPORTED_RUNTIME,
        `this Node.js (${process.version}) lacks vm.constants.DONT_CONTEXTIFY or vm.SourceTextModule; use Node.js >= 20.19`,
      ),
    });
    return;
  }
  const context: Context = createContext(constants.DONT_CONTEXTIFY, {
    name: "api-sandbox-vm plugin",
    codeGeneration: { strings: false, wasm: false },
    microtaskMode: "afterEvaluate",
  });
  const drainScript = new Script("", { filename: "sandbox:/drain" });
  /** Run the context's microtask queue (where all plugin code runs) under the CPU budget. */
  const drain = (cause: number | null = null) => {
    if (broken) return;
    drainCause = cause;
    try {
      drainScript.runInContext(context, { timeout: init.timeoutMs });
    } catch (error) {
      if (isTimeout(error)) fatalTimeout(cause);
      else throw error;
      return;
    } finally {
      drainCause = null;
    }
    // Results posted during this drain become final only now: had the worker died in the rest of
    // it (out of memory, a runaway loop), the failure belongs to the call that started it.
    if (checkMemory(cause)) post({ t: "drained", cause });
  };
  let kickPending = false;
  const kick = () => {
    if (kickPending) return;
    kickPending = true;
    setImmediate(() => {
      kickPending = false;
      drain();
    });
  };

  // The kernel's `plugin` profile: its script evaluates to `install(bridge, configJson)`, which
  // installs the FrozenGlobals, the capability stubs and the dynamic-code guards, locks the realm
  // down, and returns the guest functions the host keeps.
  const install = new Script(PLUGIN_SCRIPT, {
    filename: PLUGIN_SCRIPT_FILENAME,
    cachedData: init.kernelCache,
  }).runInContext(context);
  const config = JSON.stringify({
    capabilities: init.capabilities,
    guestFilename: PLUGIN_URL_PREFIX,
    moduleFilenamePrefix: PLUGIN_URL_PREFIX,
    moduleWrapperLength: 0,
    plainFrames: true,
    tools: init.tools,
    maxPayloadBytes: Math.floor(init.memoryLimitBytes / 2),
  });
  const api = apply(install as (...args: unknown[]) => unknown, undefined, [bridge, config]) as GuestHostApi;
  // Captured before any plugin code runs; afterwards the host never reads a guest property.
  const { registerSource, makeError, setNamespace, queueLoaded, queueCall, queueSettle } = api;
  // The load budget (timeoutMs) starts now: the plugin's own files, linking and evaluation.
  post({ t: "started" });

  port.on("message", (message: ToWorker) => {
    if (broken) return;
    switch (message.t) {
      case "call":
        apply(queueCall, undefined, [message.id, message.name, message.payload]);
        drain(message.id);
        break;
      case "cap.result":
        apply(queueSettle, undefined, [message.id, message.ok, message.payload]);
        drain();
        break;
      case "forget":
        forgotten.add(message.id);
        break;
      case "probe":
        // Reached only when no drain runs: the call is waiting, not running.
        post({ t: "probe", id: message.id });
        break;
    }
  });

  const loader = new PluginModuleLoader({
    pluginModulePath: init.pluginModulePath,
    context,
    timeoutMs: init.timeoutMs,
    registerSource: (identifier, source) => apply(registerSource, undefined, [identifier, source]),
    guestError: (code, message) => apply(makeError, undefined, [code, message]),
    kick,
    isTimeout,
  });
  let entry: SourceTextModule;
  try {
    entry = await loader.load();
  } catch (error) {
    const described =
      error instanceof VmSandboxError
        ? wire(error.code, error.message)
        : wire(
            SAND_VM_CODES.MODULE_LOAD_FAILED,
            `the plugin could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
          );
    post({ t: "load-failed", error: described });
    return;
  }
  const evaluation = entry.evaluate({ timeout: init.timeoutMs });
  drain();
  try {
    await evaluation;
  } catch (error) {
    // Whatever the plugin threw goes back to the guest unexamined (no instanceof, no property
    // reads here: a hostile Proxy would run its traps outside the timed drain); the guest encodes it.
    if (isTimeout(error)) fatalTimeout(null);
    else {
      apply(queueLoaded, undefined, [false, error]);
      drain();
    }
    return;
  }
  apply(setNamespace, undefined, [entry.namespace]);
  apply(queueLoaded, undefined, [true, undefined]);
  drain();
}

// Rejections of guest values (e.g. an import() refused while its guest promise is not yet
// observed) are the plugin's business; they must not crash the worker.
process.on("unhandledRejection", () => {});

main().catch((error: unknown) => {
  post({
    t: "fatal",
    error: wire(
      SAND_VM_CODES.WORKER_FAILED,
      `the sandbox worker failed: ${error instanceof Error ? error.message : String(error)}`,
    ),
    cause: drainCause,
  });
});
