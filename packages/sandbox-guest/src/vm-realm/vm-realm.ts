import { type Context, constants, createContext, Script } from "node:vm";
import type { KernelBridge } from "@suaveplan/sandbox-kernel";
import { createHostCodec } from "@suaveplan/sandbox-kernel";
import type { GuestRealm, RealmStatus, SourceModule } from "../driver/guest-driver.js";
import { capWasmMemory } from "../kernel/cap-wasm-memory.js";
import {
  buildKernelSource,
  GUEST_FILENAME,
  kernelConfig,
  kernelSourceHead,
  MODULE_FILENAME_PREFIX,
  MODULE_WRAPPER_CLOSE,
  MODULE_WRAPPER_OPEN,
} from "../kernel/kernel-source.js";
import type { ContextPrimitive } from "../request/execution-request.js";
import { isHostError, isHostTimeout, isSigintInterrupt } from "./host-guards.js";
import { externalMemory, heapInUse } from "./isolate-memory.js";
import { trackUnhandledRejections } from "./unhandled-rejections.js";

const { defineProperty } = Reflect;
/** How the host defines a context global: as the kernel's defineGlobal does (reused, null prototype). */
const GLOBAL_DESCRIPTOR: PropertyDescriptor = Object.assign(Object.create(null) as PropertyDescriptor, {
  value: undefined,
  writable: true,
  enumerable: false,
  configurable: true,
});

/**
 * A per-process random suffix for the kernel's lexical binding: entry scripts
 * reach it by name, guest code cannot guess it, and reflection does not find
 * it (it is not a property of the global object).
 */
let binding: string | undefined;
/** The kernel's binding name in this thread: the one {@link useKernelScript} gave, else a random one. */
function kernelBinding(): string {
  binding ??= newKernelBinding();
  return binding;
}

/**
 * A fresh random name for the kernel's lexical binding. Web Crypto's
 * `getRandomValues` (the same CSPRNG as `node:crypto`), reached through the
 * global only here: a thread or child given its binding by
 * {@link useKernelScript} never loads a crypto module (a spawn child saves
 * ~3 ms of start-up).
 */
export function newKernelBinding(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(8));
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return `__suaveplan_kernel_${hex}`;
}

let kernelCache: Uint8Array | undefined;

interface Compiled {
  kernel: Script;
  /** Evaluates to `capWasmMemory` in the context it runs in. */
  capWasm: Script;
  promisePrototype: Script;
  typeError: Script;
  entries: Record<string, Script>;
}
let compiled: Compiled | undefined;
/** The kernel's text when {@link useKernelScript} was given it, else built here. */
let kernelText: string | undefined;
/** The kernel and its entry scripts, compiled once per process (they are context-independent). */
function scripts(): Compiled {
  if (compiled === undefined) {
    const entry = (name: string) =>
      new Script(`${kernelBinding()}.enter(${JSON.stringify(name)});`, { filename: `suaveplan:${name}` });
    compiled = {
      kernel: new Script(kernelText ?? buildKernelSource(kernelBinding()), {
        filename: "suaveplan:kernel",
        cachedData: kernelCache,
      }),
      capWasm: new Script(`"use strict";\n(${capWasmMemory.toString()})`, { filename: "suaveplan:wasm-cap" }),
      promisePrototype: new Script("Promise.prototype", { filename: "suaveplan:promise" }),
      typeError: new Script("TypeError", { filename: "suaveplan:type-error" }),
      entries: {
        boot: entry("boot"),
        defineModule: entry("defineModule"),
        settle: entry("settle"),
        fail: entry("fail"),
        fire: entry("fire"),
        reply: entry("reply"),
        unhandled: entry("unhandled"),
        teardown: entry("teardown"),
      },
    };
  }
  return compiled;
}

/**
 * Compile this thread's kernel with `binding` as its binding name (made with
 * {@link newKernelBinding}) and, when given, `cachedData` — the
 * {@link kernelCodeCache} of a thread that used the same binding, and
 * `source`, the kernel's text ({@link buildKernelSource} of that binding),
 * when this build does not bundle it. The worker engine's workers take all
 * three from their host, so that each compiles the kernel from one cache and
 * no worker parses or deserialises the kernel's text as part of its entry. V8 checks a cache against the source's length and
 * its flags, not its text, so the caller must only hand over a cache made for
 * the same binding by the same kernel build (the worker engine: one binding per
 * host process, one built entry). Call before the first realm; returns false,
 * and changes nothing, when called later, with a name not made that way or
 * with a source for another binding.
 */
export function useKernelScript(options: {
  binding: string;
  cachedData?: Uint8Array | undefined;
  source?: string | undefined;
}): boolean {
  const { source } = options;
  if (compiled !== undefined || !/^__suaveplan_kernel_[0-9a-f]{16}$/.test(options.binding)) return false;
  if (source !== undefined && !source.startsWith(kernelSourceHead(options.binding))) return false;
  binding = options.binding;
  kernelCache = options.cachedData;
  kernelText = source;
  return true;
}

/**
 * The V8 code cache of this thread's kernel script, made now: the functions
 * the realms so far ran are in it. Only ever our own kernel: guest code is
 * never compiled from a cache.
 */
export function kernelCodeCache(): Uint8Array {
  return scripts().kernel.createCachedData();
}

/** Whether a script was compiled from a code cache it was given: `none` when it was given none. */
export type CodeCacheStatus = "none" | "accepted" | "rejected";

/** Whether this thread's kernel was compiled from the cache {@link useKernelScript} gave it. */
export function kernelCacheStatus(): CodeCacheStatus {
  const { kernel } = scripts();
  if (kernelCache === undefined) return "none";
  return kernel.cachedDataRejected === true ? "rejected" : "accepted";
}

const CONTEXT_OPTIONS = Object.freeze({
  codeGeneration: Object.freeze({ strings: false, wasm: false }),
  microtaskMode: "afterEvaluate" as const,
});

/** Encodes a primitive completion value on the host's side (a primitive has no realm to keep). */
let hostCodec: ReturnType<typeof createHostCodec> | undefined;

/** How much earlier than asked node's vm watchdog may fire by our clock, in ms. */
const WATCHDOG_SLACK_MS = 5;

/** Options of {@link createVmRealm}. */
export interface VmRealmOptions {
  /** The guest code, as prepared (`prepareGuestCode().source`). */
  code: string;
  /** A compiled `Script` of `code` under {@link GUEST_FILENAME}, when the caller caches them. */
  script?: Script | undefined;
  /**
   * Run the code under node's timeout watchdog (default true). False only for
   * code proven to be a bounded pure expression, where the watchdog's thread
   * start-up would cost more than the code.
   */
  watchdog?: boolean;
  /**
   * Run the entries after the first evaluation — timer callbacks, call replies,
   * settling an object or a thenable, describing a thrown value — under node's
   * watchdog too (default true; each is a thread started and joined). False only
   * where something outside the realm's thread stops it at the deadline anyway:
   * the worker engine, whose host terminates the worker when it does not report
   * in time. Guest code that never yields there then ends at that backstop.
   */
  callbackWatchdog?: boolean;
  /**
   * Context globals to define as they are, after the kernel's `boot` entry
   * (the request's `contextValues`: primitives only, no realm to cross).
   */
  contextValues?: readonly (readonly [string, ContextPrimitive])[] | undefined;
  /** Largest result the guest may send, in bytes (the request's `maxResultBytes`). */
  maxResultBytes: number;
  /** Pending timers allowed at once. */
  maxTimers: number;
  /** Timers allowed to be created in total. */
  maxTimerCreations: number;
  /** Cap the context's Wasm memory at this many bytes (see `capWasmMemory`); uncapped when absent. */
  maxWasmBytes?: number | undefined;
  /** A realm prepared ahead of time; used when its limits match and it is unused, else a fresh one is made. */
  prepared?: PreparedVmRealm | undefined;
  /**
   * True for code proven to be a straight-line expression (`isStraightLine`):
   * it calls nothing, so it leaves no promise, timer or rejection behind, and
   * its outcome is taken without the macrotask {@link GuestRealm.quiesce}
   * waits for unhandled rejections (default false).
   */
  settleAtOnce?: boolean;
  /**
   * Empty the context of the run's globals (the kernel's teardown) one
   * macrotask after the run ended, off the caller's path, instead of before
   * its result is handed over (default false). Nothing runs in the context
   * after the end; the teardown only lets the young generation drop what the
   * dead context points to. For an engine with no other run in flight: with
   * runs back to back, deferred teardowns cost throughput (see {@link VmRealm.dispose}).
   */
  teardownLater?: boolean;
  /**
   * True when nothing in the run can make an array buffer: a straight-line
   * request (it calls nothing) with no context and no data module copied in.
   * Its `memoryUsed` is then the heap's growth alone, without the two
   * external-memory readings (see {@link externalMemory}) a run otherwise
   * pays for (default false).
   */
  noBackingStores?: boolean;
  /**
   * Let SIGINT (Ctrl-C) stop guest code while it runs on this thread: every
   * entry that runs guest code runs with node's `breakOnSigint`, and an
   * interrupted run ends `cancelled` (default false). While such an entry
   * runs, node detaches the process's own SIGINT listeners, so the signal
   * only stops the code; the host learns of it from the `cancelled` outcome.
   */
  breakOnSigint?: boolean;
}

/** Compile guest code the way the vm realm runs it; throws node's SyntaxError. */
export function compileGuestScript(code: string): Script {
  return new Script(code, { filename: GUEST_FILENAME, importModuleDynamically: refuseImport as never });
}

/**
 * Node reports unhandled rejections after the current task's microtasks; one
 * macrotask later every rejection of a run has reached the tracker.
 */
function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Whether a context waits for its deferred teardown (see {@link VmRealmOptions.teardownLater}). */
let teardownWaiting = false;

/** The realm whose code runs right now (entries are synchronous), for errors made in its realm. */
let activeRealm: VmRealm | undefined;

function refuseImport(): never {
  // node rejects the guest's import() promise with what this throws: a host-realm error there
  // would hand the guest the host's Function through `constructor`. Throw the guest's own.
  const GuestTypeError = activeRealm?.guestTypeError;
  if (GuestTypeError === undefined) throw "import() is not available in the sandbox";
  throw new GuestTypeError("import() is not available in the sandbox");
}

/**
 * The guest realm on `node:vm`, shared by the vm, worker and spawn engines: a
 * fresh context per execution (an ordinary V8 global, `DONT_CONTEXTIFY`) with
 * string code generation and Wasm off and
 * `microtaskMode: "afterEvaluate"`, so every entry (the code, a timer, a
 * reply) is a `runInContext` bounded by the time left that also drains the
 * context's own microtask queue — how promise loops are stopped and how guest
 * promises make progress at all. A guest's unhandled rejection fails its run
 * and never reaches the host process (see `unhandled-rejections.ts`).
 */
export function createVmRealm(options: VmRealmOptions): (bridge: KernelBridge) => GuestRealm {
  return (bridge) => new VmRealm(options, bridge);
}

/**
 * A fresh context with the kernel installed and no guest code run yet, made
 * ahead of time (off the caller's path) and used by exactly one execution.
 * Nothing of an execution's state can reach it: it is created before the
 * execution and discarded with it.
 */
export class PreparedVmRealm {
  /** @internal */ readonly context: Context;
  /** @internal */ readonly guestTypeError: TypeErrorConstructor;
  /** @internal */ readonly promisePrototype: object;
  /** @internal */ bridge: KernelBridge = () => undefined;
  /** @internal */ args: readonly unknown[] = [];
  private taken = false;

  constructor(readonly limits: PreparedRealmLimits) {
    // An ordinary global, not node's intercepted one: on Node 22 and 24 a getter on an
    // intercepted global that never returns is beyond `timeout` (the watchdog's termination
    // is swallowed by the interceptor and the getter runs again), and every global access
    // costs an interceptor call.
    const context = createContext(constants.DONT_CONTEXTIFY, CONTEXT_OPTIONS);
    this.context = context;
    const { kernel, capWasm, typeError, promisePrototype } = scripts();
    this.guestTypeError = typeError.runInContext(context) as TypeErrorConstructor;
    this.promisePrototype = promisePrototype.runInContext(context) as object;
    if (limits.maxWasmBytes !== undefined)
      (capWasm.runInContext(context) as typeof capWasmMemory)(limits.maxWasmBytes, false);
    const install = kernel.runInContext(context) as (bridge: KernelBridge, configJson: string) => unknown;
    // The kernel keeps this trampoline; the execution that takes the realm points it at its driver.
    install(
      (op, a, b, c) => {
        if (op === "argc") return this.args.length;
        if (op === "arg") return typeof a === "number" ? this.args[a] : undefined;
        return this.bridge(op, a, b, c);
      },
      JSON.stringify(
        kernelConfig({ maxTimers: limits.maxTimers, maxTimerCreations: limits.maxTimerCreations }),
      ),
    );
  }

  /** True once an execution took it; a prepared realm is never used twice. */
  get used(): boolean {
    return this.taken;
  }

  /** @internal Hand the realm to one execution. */
  take(bridge: KernelBridge): this {
    if (this.taken) throw new Error("a prepared realm serves one execution only");
    this.taken = true;
    this.bridge = bridge;
    return this;
  }
}

/** What a prepared realm was made with; an execution uses it only when its own are the same. */
export interface PreparedRealmLimits {
  readonly maxTimers: number;
  readonly maxTimerCreations: number;
  /** The Wasm memory cap installed in it (see `capWasmMemory`); none when absent. */
  readonly maxWasmBytes?: number | undefined;
}

/** Prepare a realm for a later execution with these limits (see {@link PreparedVmRealm}). */
export function prepareVmRealm(limits: PreparedRealmLimits): PreparedVmRealm {
  return new PreparedVmRealm(limits);
}

class VmRealm implements GuestRealm {
  /** The context's own TypeError, captured before guest code ran. */
  readonly guestTypeError: TypeErrorConstructor;
  private context: Context | undefined;
  private readonly state: PreparedVmRealm;
  /** Whether the run's external memory is read (see {@link VmRealmOptions.noBackingStores}). */
  private readonly readsExternal: boolean;
  /** What the isolate held before the run: the heap and, when read, the external memory. */
  private readonly memoryBefore: { heap: number; external: number };
  /** Time spent inside the context's entries: the guest's code runs only there, on this thread. */
  private activeMs = 0;
  private readonly untrack: () => void;
  /** Whether entries after the first evaluation run under node's watchdog (see {@link VmRealmOptions.callbackWatchdog}). */
  private readonly callbackWatchdog: boolean;
  /** See {@link VmRealmOptions.breakOnSigint}. */
  private readonly breakOnSigint: boolean;
  /** Waits one macrotask before the outcome is taken; none for code that can leave nothing behind. */
  readonly quiesce: (() => Promise<void>) | undefined;

  constructor(
    private readonly options: VmRealmOptions,
    bridge: KernelBridge,
  ) {
    // Read first: a context made here (none was prepared) is part of the run.
    this.readsExternal = options.noBackingStores !== true;
    this.memoryBefore = { heap: heapInUse(), external: this.readsExternal ? externalMemory() : 0 };
    const prepared = options.prepared;
    const usable =
      prepared !== undefined &&
      !prepared.used &&
      prepared.limits.maxTimers === options.maxTimers &&
      prepared.limits.maxTimerCreations === options.maxTimerCreations &&
      prepared.limits.maxWasmBytes === options.maxWasmBytes;
    this.state = (usable ? prepared : new PreparedVmRealm(options)).take(bridge);
    this.callbackWatchdog = options.callbackWatchdog !== false;
    this.breakOnSigint = options.breakOnSigint === true;
    this.quiesce = options.settleAtOnce === true ? undefined : nextMacrotask;
    this.context = this.state.context;
    this.guestTypeError = this.state.guestTypeError;
    this.untrack = trackUnhandledRejections(this.state.promisePrototype, (reason) => {
      if (this.context === undefined) return;
      this.run("unhandled", [reason], 1_000, this.callbackWatchdog);
    });
  }

  boot(
    runConfigJson: string,
    contextText: string,
    modulesText: string,
    sourceModules: readonly SourceModule[],
    timeoutMs: number,
  ): RealmStatus {
    const started = performance.now();
    // The host's own JSON (see the driver's run config).
    // Boot runs kernel code only (parse the run config, decode data, define globals): no guest
    // code exists yet, so it is bounded by its input and needs no watchdog thread.
    const status = this.run("boot", [runConfigJson, contextText, modulesText], timeoutMs, false);
    if (!status.ok) return status;
    const values = this.options.contextValues;
    if (values !== undefined) {
      // As the kernel's defineGlobal does; a primitive has no realm, so the host defines it directly.
      const global = this.context as object;
      for (const [name, value] of values) {
        GLOBAL_DESCRIPTOR.value = value;
        defineProperty(global, name, GLOBAL_DESCRIPTOR);
      }
      GLOBAL_DESCRIPTOR.value = undefined;
    }
    for (const module of sourceModules) {
      let factory: unknown;
      try {
        factory = new Script(`${MODULE_WRAPPER_OPEN}${module.source}${MODULE_WRAPPER_CLOSE}`, {
          filename: `${MODULE_FILENAME_PREFIX}${module.name}`,
        }).runInContext(this.context as Context, { displayErrors: false });
      } catch (error) {
        return {
          ok: false,
          outcome: {
            kind: "fault",
            message: `module ${module.name} could not be compiled: ${isHostError(error) ? error.message : "invalid source"}`,
          },
        };
      }
      const left = Math.max(1, Math.ceil(timeoutMs - (performance.now() - started)));
      const defined = this.run("defineModule", [module.name, factory], left);
      if (!defined.ok) return defined;
    }
    return { ok: true };
  }

  main(timeoutMs: number): RealmStatus {
    const context = this.context;
    if (context === undefined)
      return { ok: false, outcome: { kind: "fault", message: "the realm was released" } };
    let script = this.options.script;
    if (script === undefined) {
      try {
        script = compileGuestScript(this.options.code);
      } catch (error) {
        return { ok: false, outcome: { kind: "syntax", error: syntaxRecord(error) } };
      }
    }
    const started = performance.now();
    let value: unknown;
    activeRealm = this;
    try {
      value =
        this.options.watchdog === false
          ? script.runInContext(context, { displayErrors: false })
          : script.runInContext(context, {
              timeout: timeoutMs,
              displayErrors: false,
              breakOnSigint: this.breakOnSigint,
            });
    } catch (thrown) {
      const spent = performance.now() - started;
      this.activeMs += spent;
      if (this.breakOnSigint && isSigintInterrupt(thrown))
        return { ok: false, outcome: { kind: "cancelled" } };
      if (isHostTimeout(thrown) || spent >= timeoutMs - WATCHDOG_SLACK_MS) {
        return { ok: false, outcome: { kind: "timeout", timeoutMs: -1 } };
      }
      return this.run("fail", [thrown], Math.max(1, Math.ceil(timeoutMs - spent)), this.callbackWatchdog);
    } finally {
      activeRealm = undefined;
    }
    this.activeMs += performance.now() - started;
    if (value === null || (typeof value !== "object" && typeof value !== "function"))
      return this.settlePrimitive(value);
    return this.run(
      "settle",
      [value],
      Math.max(1, Math.ceil(timeoutMs - (performance.now() - started))),
      this.callbackWatchdog,
    );
  }

  /**
   * Report a primitive completion value without entering the realm again: a primitive has no
   * getter, no thenable and no realm, so the host's codec encodes it exactly as the kernel's would
   * (the same `installCodec`), and one `runInContext` less is on the caller's path.
   */
  private settlePrimitive(value: unknown): RealmStatus {
    hostCodec ??= createHostCodec();
    let text: string;
    try {
      text = hostCodec.encode(value, "result", this.options.maxResultBytes);
    } catch (error) {
      if (!hostCodec.isNotTransferable(error))
        return { ok: false, outcome: { kind: "fault", message: "the result could not be encoded" } };
      this.state.bridge("done", "untransferable", JSON.stringify({ path: error.path, what: error.what }));
      return { ok: true };
    }
    this.state.bridge("done", "value", text);
    return { ok: true };
  }

  enter(
    name: "fire" | "reply",
    args: readonly (string | number | boolean)[],
    timeoutMs: number,
  ): RealmStatus {
    return this.run(name, args, timeoutMs, this.callbackWatchdog);
  }

  cpuUsed(): number {
    return this.activeMs;
  }

  memoryUsed(): number {
    // Each part's growth on its own: a collection of garbage older than the run must not hide
    // the buffers the run holds (it did, by 2 MiB of 32, in a spawn child on Node 22).
    const heap = Math.max(0, heapInUse() - this.memoryBefore.heap);
    return this.readsExternal ? heap + Math.max(0, externalMemory() - this.memoryBefore.external) : heap;
  }

  dispose(): void {
    const context = this.context;
    if (context === undefined) return;
    this.context = undefined;
    this.state.args = [];
    this.state.bridge = () => undefined;
    this.untrack();
    // At most one context waits for its teardown: runs chained in microtasks (straight-line ones,
    // awaited in a loop) reach no macrotask, and each waiting one would keep its context alive.
    if (this.options.teardownLater === true && !teardownWaiting) {
      teardownWaiting = true;
      setImmediate(() => {
        teardownWaiting = false;
        this.teardown(context);
      }).unref();
      return;
    }
    // Run here, not deferred to a later macrotask, when runs may be back to back: deferred, 8-caller
    // throughput on vm fell from ~1,700 to ~1,200 calls/s.
    this.teardown(context);
  }

  /** Drop the run's globals from a context no code runs in any more (see {@link VmRealmOptions.teardownLater}). */
  private teardown(context: Context): void {
    try {
      // Kernel code only (deletes of its own globals): no watchdog.
      scripts().entries.teardown?.runInContext(context, { displayErrors: false });
    } catch {
      // Nothing to report: the run is over, and the context is dropped anyway.
    }
    // The globals the host defined (see boot), as the kernel's teardown deletes its own.
    const values = this.options.contextValues;
    if (values !== undefined) for (const [name] of values) Reflect.deleteProperty(context, name);
  }

  /**
   * Run one kernel entry in the context within `timeoutMs` (under node's watchdog thread unless
   * `watchdog` is false: only for entries that run no guest code); a throw here is a timeout or a fault.
   */
  private run(name: string, args: readonly unknown[], timeoutMs: number, watchdog = true): RealmStatus {
    const context = this.context;
    if (context === undefined)
      return { ok: false, outcome: { kind: "fault", message: "the realm was released" } };
    const script = scripts().entries[name];
    if (script === undefined)
      return { ok: false, outcome: { kind: "fault", message: `no kernel entry ${name}` } };
    this.state.args = args;
    const started = performance.now();
    const outer = activeRealm;
    activeRealm = this;
    try {
      if (watchdog)
        script.runInContext(context, {
          timeout: timeoutMs,
          displayErrors: false,
          breakOnSigint: this.breakOnSigint,
        });
      else script.runInContext(context, { displayErrors: false });
      return { ok: true };
    } catch (thrown) {
      if (this.breakOnSigint && isSigintInterrupt(thrown))
        return { ok: false, outcome: { kind: "cancelled" } };
      if (isHostTimeout(thrown) || performance.now() - started >= timeoutMs - WATCHDOG_SLACK_MS) {
        return { ok: false, outcome: { kind: "timeout", timeoutMs: -1 } };
      }
      // The kernel catches everything guest code throws; what escapes is ours or node's.
      return {
        ok: false,
        outcome: {
          kind: "fault",
          message: isHostError(thrown) ? `${thrown.name}: ${thrown.message}` : "the kernel failed",
        },
      };
    } finally {
      this.state.args = [];
      activeRealm = outer;
      this.activeMs += performance.now() - started;
    }
  }
}

/**
 * How V8 words the syntax error of `code`, compiled as the vm realm compiles
 * it and never run; undefined when V8 compiles it. For a realm with another
 * parser (QuickJS), so a syntax error reads the same on every engine.
 */
export function v8SyntaxRecord(code: string): ReturnType<typeof syntaxRecord> | undefined {
  try {
    compileGuestScript(code);
    return undefined;
  } catch (error) {
    return syntaxRecord(error);
  }
}

/** `SyntaxError` location from node's decorated compile error (`sandbox.js:3` header). */
function syntaxRecord(error: unknown): {
  name: string;
  message: string;
  stack: string;
  line?: number;
  column?: number;
} {
  const message = isHostError(error) ? error.message : "Invalid or unexpected token";
  const record: { name: string; message: string; stack: string; line?: number; column?: number } = {
    name: "SyntaxError",
    message,
    stack: "",
  };
  const stack = isHostError(error) && typeof error.stack === "string" ? error.stack : "";
  const found = /^[^\n]*:(\d+)\n[^\n]*\n( *)\^/.exec(stack);
  if (found !== null) {
    record.line = Number(found[1]);
    record.column = (found[2] ?? "").length + 1;
  }
  return record;
}
