/**
 * The worker side of `WorkerEngine`. Built as a self-contained CommonJS script
 * (`dist/worker-entry.cjs`) whose text is passed to `new Worker(source,
 * { eval: true })`, so a worker boots without the ESM loader. It prepares a
 * guest `vm` context while idle, runs exactly one request and is terminated
 * by the host. Not a security boundary: the worker shares the
 * host process; the `vm` context only keeps `require`, `process`, `import()`
 * and this worker's message port out of the guest's reach.
 */
import { Buffer } from "node:buffer";
import { getHeapStatistics } from "node:v8";
import * as vm from "node:vm";
import { parentPort, resourceLimits } from "node:worker_threads";
import { GUEST_FILENAME, GUEST_MODULE_FILENAME_PREFIX, guestKernel } from "./internal/guest-kernel.js";
import type { FailureKind, GuestKernel, RunRequest, WorkerMessage } from "./internal/protocol.js";

hardenWorkerRealm();

const port = parentPort;
if (port === null) throw new Error("@suaveplan/sandbox-worker: worker-entry must run inside a worker thread");

// ---- prepared while the worker waits (off the caller's path) ------------
const context = vm.createContext(Object.create(null), {
  name: "suaveplan-sandbox-guest",
  codeGeneration: { strings: false, wasm: false },
});
const GuestTypeError = vm.runInContext("TypeError", context) as TypeErrorConstructor;
/** `import()` in guest code rejects with a guest-realm error (never a worker-realm one). */
const importModuleDynamically = (): never => {
  throw new GuestTypeError("import() is not available in the sandbox");
};

/** `sandbox.js:3\n<source line>\n      ^` at the top of a decorated compile-error stack. */
const COMPILE_LOCATION = /^[^\n]*:(\d+)\n[^\n]*\n( *)\^/;

let request: RunRequest | undefined;
let finished = false;
let settled = false;
let finalizeQueued = false;
let outputBytes = 0;
let outputFull = false;
let heapBefore = 0;
const timers = new Map<number, NodeJS.Timeout>();
/** A result may cost the host no more than the worker's own heap limit (memoryLimit), in bytes. */
const maxResultBytes =
  ((resourceLimits.maxOldGenerationSizeMb ?? 0) + (resourceLimits.maxYoungGenerationSizeMb ?? 0)) *
    1024 *
    1024 || undefined;

const kernelFactory = new vm.Script(`"use strict";(${guestKernel.toString()})`, {
  filename: "suaveplan:kernel",
}).runInContext(context) as typeof guestKernel;
const kernel: GuestKernel = kernelFactory(
  bridgeLog,
  bridgeSetTimer,
  bridgeClearTimer,
  bridgeSettled,
  bridgeUncaught,
);

process.on("unhandledRejection", (reason) => {
  fail("guest", `Uncaught (in promise) ${guestText(kernel.describe(reason))}`);
});

// `on`, not `once`: the listening port keeps this worker alive while the guest
// waits on a promise that never settles, until the host's timeout terminates it.
port.on("message", (message: RunRequest) => {
  if (request === undefined) run(message);
});
post({ type: "ready" });

// ---- one execution -------------------------------------------------------
function run(message: RunRequest): void {
  request = message;
  post({ type: "started" });
  heapBefore = getHeapStatistics().used_heap_size;
  let script: vm.Script;
  try {
    script = new vm.Script(message.code, { filename: GUEST_FILENAME, importModuleDynamically });
  } catch (error) {
    fail("guest", describeCompileError(error));
    return;
  }
  for (const module of message.modules) {
    let problem: string;
    if ("source" in module) {
      let factory: unknown;
      try {
        factory = vm.compileFunction(module.source, ["module", "exports"], {
          parsingContext: context,
          filename: `${GUEST_MODULE_FILENAME_PREFIX}${module.name}`,
          importModuleDynamically,
        });
      } catch {
        // That error belongs to the guest realm; compile once more in this realm for a readable one.
        fail(
          "module",
          `module "${module.name}" failed to compile: ${describeCompileError(recompile(module.source))}`,
        );
        return;
      }
      problem = guestText(kernel.defineModule(module.name, factory));
    } else {
      problem = guestText(kernel.defineGlobal(module.name, module.exports));
    }
    if (problem !== "") {
      fail("module", `module "${module.name}" failed to load: ${problem}`);
      return;
    }
  }
  for (const name of Object.keys(message.context)) {
    const problem = guestText(kernel.defineGlobal(name, message.context[name]));
    if (problem !== "") {
      fail("context", `context.${name} could not be copied into the sandbox: ${problem}`);
      return;
    }
  }
  let value: unknown;
  try {
    value = script.runInContext(context, { displayErrors: false });
  } catch (error) {
    fail("guest", guestText(kernel.describe(error)));
    return;
  }
  kernel.track(value);
}

/** Ends the execution once its value has settled and no guest timer is pending. */
function maybeFinish(): void {
  if (finished || !settled || timers.size > 0 || finalizeQueued) return;
  finalizeQueued = true;
  // One macrotask later, so rejections left unhandled by the guest are reported first.
  setImmediate(() => {
    finalizeQueued = false;
    if (finished || timers.size > 0) return;
    finished = true;
    cancelTimers();
    const outcome = kernel.outcome(maxResultBytes);
    if (outcome.ok) {
      try {
        post({ type: "done", ok: true, value: outcome.value, memoryUsed: memoryUsed() });
      } catch (error) {
        send({
          type: "done",
          ok: false,
          kind: "untransferable",
          error: `result is not transferable: ${describeWorkerError(error)}`,
          memoryUsed: memoryUsed(),
        });
      }
    } else if ("pending" in outcome) {
      send({
        type: "done",
        ok: false,
        kind: "guest",
        error: "the result never settled",
        memoryUsed: memoryUsed(),
      });
    } else {
      const kind: FailureKind = outcome.untransferable ? "untransferable" : "guest";
      send({ type: "done", ok: false, kind, error: guestText(outcome.error), memoryUsed: memoryUsed() });
    }
  });
}

function fail(kind: FailureKind, error: string): void {
  if (finished) return;
  finished = true;
  cancelTimers();
  send({ type: "done", ok: false, kind, error, memoryUsed: memoryUsed() });
}

function cancelTimers(): void {
  for (const handle of timers.values()) clearTimeout(handle);
  timers.clear();
  kernel.cancelAll();
}

function memoryUsed(): number {
  return Math.max(0, getHeapStatistics().used_heap_size - heapBefore);
}

// ---- bridges: called by the kernel with primitives only, never throw ----
function bridgeLog(level: number, message: string): boolean {
  try {
    if (finished || outputFull || request === undefined) return false;
    if (typeof level !== "number" || typeof message !== "string") return true;
    const remaining = request.maxOutputSize - outputBytes;
    const size = Buffer.byteLength(message, "utf8");
    if (size <= remaining) {
      outputBytes += size;
      post({ type: "log", level, message });
      return true;
    }
    // Over budget: send just enough for the host to cut exactly and append
    // the sentinel, then stop sending, so a flood cannot grow the channel.
    outputFull = true;
    post({ type: "log", level, message: message.slice(0, remaining + 1) });
    return false;
  } catch {
    return false;
  }
}

function bridgeSetTimer(id: number, delayMs: number, repeat: boolean): void {
  try {
    if (finished || typeof id !== "number" || typeof delayMs !== "number") return;
    const fire = (): void => {
      if (!repeat) timers.delete(id);
      if (finished) return;
      const problem = guestText(kernel.fire(id));
      if (problem !== "") fail("guest", problem);
      else maybeFinish();
    };
    timers.set(id, repeat ? setInterval(fire, delayMs) : setTimeout(fire, delayMs));
  } catch {
    // never throw into the guest
  }
}

function bridgeClearTimer(id: number): void {
  try {
    const handle = timers.get(id);
    if (handle === undefined) return;
    clearTimeout(handle);
    timers.delete(id);
    maybeFinish();
  } catch {
    // never throw into the guest
  }
}

function bridgeSettled(): void {
  try {
    settled = true;
    maybeFinish();
  } catch {
    // never throw into the guest
  }
}

function bridgeUncaught(message: string): void {
  try {
    fail("guest", guestText(message));
  } catch {
    // never throw into the guest
  }
}

// ---- helpers ---------------------------------------------------------------
function post(message: WorkerMessage): void {
  port?.postMessage(message);
}

/** Post, and if even that fails, fall back to a plain failure message. */
function send(message: WorkerMessage): void {
  try {
    post(message);
  } catch (error) {
    post({ type: "done", ok: false, kind: "guest", error: describeWorkerError(error), memoryUsed: 0 });
  }
}

/** Kernel results are primitives by construction; check anyway before trusting them. */
function guestText(value: unknown): string {
  return typeof value === "string" ? value : "the sandbox returned an unreadable error";
}

/** A worker-realm error (compile errors, clone errors) as one line; never a stack. */
function describeWorkerError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** Compile `source` as a module body in the worker realm (no guest context) and return the error. */
function recompile(source: string): unknown {
  try {
    vm.compileFunction(source, ["module", "exports"], { filename: "sandbox-module" });
    return new SyntaxError("the module source does not compile");
  } catch (error) {
    return error;
  }
}

/** A compile error with the line and column V8 put in its decorated stack, e.g. `SyntaxError: … (line 3, column 7)`. */
function describeCompileError(error: unknown): string {
  const text = describeWorkerError(error);
  const stack = error instanceof Error ? error.stack : undefined;
  const where = typeof stack === "string" ? COMPILE_LOCATION.exec(stack) : null;
  if (where === null) return text;
  return `${text} (line ${where[1]}, column ${(where[2]?.length ?? 0) + 1})`;
}

/**
 * Defence in depth: should a worker-realm object ever reach guest code, its
 * `constructor.constructor` must not be a code-generating `Function`. Replace
 * the constructor of every function kind in this (worker) realm.
 */
function hardenWorkerRealm(): void {
  const refuse = function constructorDisabled(): never {
    throw new TypeError("Function constructors are disabled in the sandbox worker");
  };
  const kinds = [() => {}, async () => {}, function* () {}, async function* () {}];
  for (const fn of kinds) {
    Object.defineProperty(Object.getPrototypeOf(fn), "constructor", {
      value: refuse,
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }
}
