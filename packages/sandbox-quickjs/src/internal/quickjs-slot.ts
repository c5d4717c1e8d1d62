import { randomFillSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import variantExport from "@jitl/quickjs-ng-wasmfile-release-sync";
import { buildKernelSource, type KernelBridge, kernelConfig } from "@suaveplan/sandbox-guest";
import {
  type CustomizeVariantOptions,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
} from "quickjs-emscripten-core";

const PAGE = 65_536;
/** What the module's own glue starts with (`INITIAL_MEMORY`); its data and stack sit in it. */
const INITIAL_PAGES = 256;
/** wasm32's ceiling. */
const MAX_PAGES = 32_768;
/** The kernel's script-scope binding inside a slot (no guest code runs before it is bound). */
const KERNEL_FILENAME = "suaveplan:kernel";
/** What dlmalloc may write past its top chunk (a fencepost header), rounded up. */
const TOP_FOOTER_BYTES = 64;
/**
 * The stack QuickJS may use for guest code, in bytes (its default is 1 MiB). QuickJS counts its
 * own (emscripten's) stack, but each WebAssembly frame also takes the host thread's native stack,
 * which runs out first at 1 MiB — and 256 KiB for recursion through C paths such as bound
 * functions and `toString` — so the guest saw no RangeError, the run failed in the host, and host
 * code the guest called at that edge (its timers) could run out of stack part-way. At 128 KiB
 * every recursion tried ends in QuickJS's catchable RangeError (about 740 plain calls deep) with
 * most of the native stack to spare.
 */
const MAX_STACK_BYTES = 128 * 1024;

/** The pinned QuickJS build (its CommonJS typings name the variant `default`). */
const variant = ((variantExport as { default?: QuickJSSyncVariant }).default ??
  variantExport) as QuickJSSyncVariant;

/** What this package uses of the WebAssembly global (Node's typings do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
  compile(bytes: Uint8Array): Promise<object>;
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let compiled: Promise<object> | undefined;

/** The QuickJS build, compiled once per process (each slot instantiates it with its own memory). */
function compiledModule(): Promise<object> {
  compiled ??= (async () => {
    const path = createRequire(import.meta.url).resolve("@jitl/quickjs-ng-wasmfile-release-sync/wasm");
    return Wasm.compile(readFileSync(path));
  })();
  return compiled;
}

/** What a slot's kernel is installed with: a slot serves only executions with the same. */
export interface SlotLimits {
  /** Bytes a run may allocate beyond the image. */
  memoryLimit: number;
  maxTimers: number;
  maxTimerCreations: number;
}

/** The slot pool's key for `limits`. */
export function slotKey(limits: SlotLimits): string {
  return `${limits.memoryLimit}/${limits.maxTimers}/${limits.maxTimerCreations}`;
}

/**
 * One QuickJS instance (its own WebAssembly memory) with the shared kernel
 * compiled and installed into it once, and an image of its memory taken
 * right after. A run starts by copying the image back, so each run sees a
 * realm in which no guest code has ever run, and the kernel's compile and
 * install (tens of ms and ~0.6 ms in QuickJS) are paid once per slot, not per
 * run. One run at a time per slot.
 *
 * What the image cannot reset is renewed per run: the kernel's `renew`
 * entry gets fresh entropy (its `crypto`) and a new time origin, and
 * QuickJS's `Math.random` state is reseeded (see {@link calibrateRandomState}).
 *
 * The memory limit is the slot's: the module's memory may grow to the image
 * plus `memoryLimit` and no further. QuickJS's own `setMemoryLimit` does not
 * bound a total in this build (it counts 8 bytes per allocation: the
 * platform reports no usable size), so the slot refuses the memory's growth
 * instead and remembers that it did ({@link exceeded}): the run ends
 * `SANDBOX_MEMORY_EXCEEDED` even when the guest catches QuickJS's
 * "out of memory".
 */
export class QuickJsSlot {
  /** The run's bridge; the kernel's bridge function forwards to it. */
  bridge: KernelBridge = () => undefined;
  /** `performance.now()` past which the interrupt handler stops guest code. */
  deadline = Number.POSITIVE_INFINITY;
  /** The interrupt handler stopped guest code since {@link restore}. */
  interrupted = false;
  /** False once the slot cannot be trusted to run again (a fault mid-run). */
  healthy = true;

  private constructor(
    readonly limits: SlotLimits,
    private readonly memory: WasmMemory,
    readonly runtime: QuickJSRuntime,
    readonly context: QuickJSContext,
    /** The installed kernel's entries. */
    readonly entries: QuickJSHandle,
    private readonly image: RestoreImage,
    private readonly randomStateAt: number,
    private readonly guard: MemoryGuard,
  ) {}

  /** The memory refused to grow past the limit since {@link restore}. */
  get exceeded(): boolean {
    return this.guard.exceeded;
  }

  /**
   * A slot whose runs may allocate `limits.memoryLimit` bytes beyond the
   * kernel's image. The first slot for a set of timer limits compiles and
   * installs the kernel (tens of ms of this thread); later ones copy its
   * image into a new module instance (a few ms), see {@link Template}.
   */
  static async create(limits: SlotLimits): Promise<QuickJsSlot> {
    const key = templateKey(limits);
    const template = templates.get(key);
    if (template !== undefined) {
      const cloned = await QuickJsSlot.clone(limits, template);
      if (cloned !== undefined) return cloned;
      templates.delete(key); // not this build's layout after all: compile from now on
    }
    const fresh = await newInstance();
    const { context, runtime, memory, bridgeFunction } = fresh;
    const evaluated = context.evalCode(buildKernelSource("kernel"), KERNEL_FILENAME, { type: "global" });
    const install = context.unwrapResult(evaluated);
    // Installed without entropy: each run's comes with `renew`.
    const config = { ...kernelConfig(limits), entropy: "" };
    const entries = context.unwrapResult(
      context.callFunction(
        install,
        context.undefined,
        bridgeFunction,
        context.newString(JSON.stringify(config)),
      ),
    );
    const randomStateAt = calibrateRandomState(context, memory);
    const whole = new Uint8Array(memory.buffer).slice();
    const image = restoreImage(context, runtime, memory, whole);
    new Uint8Array(memory.buffer).set(whole);
    if (templates.size >= MAX_TEMPLATES) templates.delete(templates.keys().next().value as string);
    templates.set(key, {
      image,
      randomStateAt,
      entriesAt: pointerOf(entries),
      layout: layoutOf(fresh),
      memoryBytes: memory.buffer.byteLength,
    });
    return QuickJsSlot.finish(limits, fresh, entries, image, randomStateAt);
  }

  /** A new slot from `template`'s image, or undefined when the new instance is not laid out alike. */
  private static async clone(limits: SlotLimits, template: Template): Promise<QuickJsSlot | undefined> {
    const fresh = await newInstance();
    const layout = layoutOf(fresh);
    if (layout.join() !== template.layout.join()) return undefined;
    const { memory, context, runtime } = fresh;
    if (memory.buffer.byteLength < template.memoryBytes)
      memory.grow((template.memoryBytes - memory.buffer.byteLength) / PAGE);
    const heap = new Uint8Array(memory.buffer);
    for (const part of template.image.parts) heap.set(part.bytes, part.at);
    const entries = (
      context as unknown as { getMemory(rt: number): { heapValueHandle(pointer: number): QuickJSHandle } }
    )
      .getMemory(runtimePointer(runtime))
      .heapValueHandle(template.entriesAt);
    // The copy must be a working realm with the kernel's entries where the template had them.
    const probe = context.evalCode("typeof Reflect === 'object' && 6 * 7", "probe.js", { type: "global" });
    const ok =
      probe.error === undefined &&
      context.typeof(entries) === "object" &&
      context.getNumber(probe.value) === 42;
    // A fresh view: had the probe grown the memory, `heap` would be detached.
    const after = new Uint8Array(memory.buffer);
    for (const part of template.image.parts) after.set(part.bytes, part.at);
    if (!ok) return undefined;
    return QuickJsSlot.finish(limits, fresh, entries, template.image, template.randomStateAt);
  }

  private static finish(
    limits: SlotLimits,
    fresh: FreshInstance,
    entries: QuickJSHandle,
    image: RestoreImage,
    randomStateAt: number,
  ): QuickJsSlot {
    const { memory, runtime, context, guard } = fresh;
    const slot = new QuickJsSlot(limits, memory, runtime, context, entries, image, randomStateAt, guard);
    fresh.bind(slot);
    guard.capBytes = Math.min(
      MAX_PAGES * PAGE,
      Math.max(memory.buffer.byteLength, roundUp(image.end + limits.memoryLimit)),
    );
    return slot;
  }

  /** Bytes a run's restore copies. */
  get restoredBytes(): number {
    return this.image.parts.reduce((sum, part) => sum + part.bytes.byteLength, 0);
  }

  /** Put the memory back as it was after the kernel was installed, and reseed `Math.random`. */
  restore(bridge: KernelBridge): void {
    const heap = new Uint8Array(this.memory.buffer);
    for (const part of this.image.parts) heap.set(part.bytes, part.at);
    const seed = new Uint32Array(2);
    do randomFillSync(seed);
    while (seed[0] === 0 && seed[1] === 0);
    const words = new Uint32Array(this.memory.buffer);
    words[this.randomStateAt >> 2] = seed[0] as number;
    words[(this.randomStateAt >> 2) + 1] = seed[1] as number;
    this.bridge = bridge;
    this.deadline = Number.POSITIVE_INFINITY;
    this.interrupted = false;
    this.guard.exceeded = false;
  }

  /**
   * Bytes the heap grew by since {@link restore}: how far the allocator's
   * top chunk moved up (memory freed and reused inside the run does not
   * count twice; what fits in free space below it does not count). Undefined
   * when the top chunk was not found.
   */
  heapGrowth(): number | undefined {
    const { topAt, top } = this.image;
    if (topAt < 0) return undefined;
    const now = new Uint32Array(this.memory.buffer)[topAt >> 2] as number;
    return Math.max(0, now - top);
  }

  /** Point the bridge nowhere: nothing of the last run reaches the host through it. */
  release(): void {
    this.bridge = () => undefined;
    this.deadline = Number.POSITIVE_INFINITY;
  }

  /** Bytes of the module's memory now (it never shrinks). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** The module's memory grew past what it started with (a run allocated much): it stays that big. */
  get grown(): boolean {
    return this.memory.buffer.byteLength > INITIAL_PAGES * PAGE;
  }

  /** The most the module's memory may grow to. */
  get capacityBytes(): number {
    return this.guard.capBytes;
  }
}

/** One module instance made the same way for every slot, before any kernel is in it. */
interface FreshInstance {
  memory: WasmMemory;
  guard: MemoryGuard;
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  /** The function the kernel calls as its bridge. */
  bridgeFunction: QuickJSHandle;
  /** Point the interrupt handler and the bridge at `slot`. */
  bind(slot: QuickJsSlot): void;
}

/**
 * What a slot made by compiling the kernel leaves for later slots with the
 * same timer limits: its restore image, where its kernel's entries and
 * `Math.random` state are, and the layout of the instance it was made in.
 * A new instance made by the same steps is laid out alike (the module and
 * its allocator are deterministic; checked: the runtime, the context and the
 * bridge function must sit at the same addresses, and the copy must run), so
 * copying the image into it gives it the installed kernel without compiling.
 */
interface Template {
  image: RestoreImage;
  randomStateAt: number;
  /** Address of the kernel's entries value (a handle's pointer). */
  entriesAt: number;
  /** The fresh instance's runtime, context and bridge addresses, and the bridge's value. */
  layout: readonly number[];
  /** The module's memory when the image was taken. */
  memoryBytes: number;
}

/** Templates by {@link templateKey}, oldest first. */
const templates = new Map<string, Template>();
/** Templates kept per process (each holds about 2 MiB). */
const MAX_TEMPLATES = 8;

/** The kernel in an image depends on the timer limits only (memory is capped outside it). */
function templateKey(limits: SlotLimits): string {
  return `${limits.maxTimers}/${limits.maxTimerCreations}`;
}

/** A handle's address in the module's memory. */
function pointerOf(handle: QuickJSHandle): number {
  return (handle as unknown as { value: number }).value;
}

function layoutOf(fresh: FreshInstance): number[] {
  const bridgeAt = pointerOf(fresh.bridgeFunction);
  const words = new Uint32Array(fresh.memory.buffer);
  return [
    runtimePointer(fresh.runtime),
    contextPointer(fresh.context),
    bridgeAt,
    words[bridgeAt >> 2] as number,
    words[(bridgeAt >> 2) + 1] as number,
  ];
}

/** A module instance with its own capped memory, a runtime, a context and the bridge function. */
async function newInstance(): Promise<FreshInstance> {
  const memory = new Wasm.Memory({ initial: INITIAL_PAGES, maximum: MAX_PAGES });
  const guard: MemoryGuard = { capBytes: MAX_PAGES * PAGE, exceeded: false };
  const grow = memory.grow.bind(memory);
  // The module's glue grows its memory only through this object (emscripten_resize_heap).
  Object.defineProperty(memory, "grow", {
    value(delta: number): number {
      if (memory.buffer.byteLength + delta * PAGE > guard.capBytes) {
        guard.exceeded = true;
        throw new RangeError("the sandbox's memory limit");
      }
      return grow(delta);
    },
  });
  const module = await compiledModule();
  const qjs = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, {
      wasmModule: module as NonNullable<CustomizeVariantOptions["wasmModule"]>,
      wasmMemory: memory as unknown as NonNullable<CustomizeVariantOptions["wasmMemory"]>,
    }),
  );
  const runtime = qjs.newRuntime();
  runtime.setMaxStackSize(MAX_STACK_BYTES);
  const context = runtime.newContext();
  let slot: QuickJsSlot | undefined;
  runtime.setInterruptHandler(() => {
    if (slot === undefined || performance.now() <= slot.deadline) return false;
    slot.interrupted = true;
    return true;
  });
  const bridgeFunction = context.newFunction("bridge", (...handles) => {
    if (slot === undefined) return context.undefined;
    const args = handles.map((handle) => primitiveOf(context, handle));
    return handleOf(context, slot.bridge(args[0] as string, args[1], args[2], args[3]));
  });
  return {
    memory,
    guard,
    runtime,
    context,
    bridgeFunction,
    bind(bound) {
      slot = bound;
    },
  };
}

/** What the memory's `grow` checks and records. */
interface MemoryGuard {
  capBytes: number;
  exceeded: boolean;
}

/** The parts of the image a restore copies back, and where the heap ends. */
interface RestoreImage {
  parts: { at: number; bytes: Uint8Array }[];
  /** Where the heap ends in the image: nothing in use lies past it. */
  end: number;
  /** Byte offset of the allocator's word holding its top chunk's start, or -1 when it was not found (then `end` is the whole image). */
  topAt: number;
  /** The top chunk's start in the image. */
  top: number;
}

function roundUp(bytes: number): number {
  return Math.ceil(bytes / PAGE) * PAGE;
}

/** A bridge argument as a primitive (the kernel passes nothing else). */
function primitiveOf(context: QuickJSContext, handle: QuickJSHandle): unknown {
  switch (context.typeof(handle)) {
    case "string":
      return context.getString(handle);
    case "number":
      return context.getNumber(handle);
    case "boolean":
      return context.dump(handle);
    default:
      return undefined;
  }
}

/** A bridge answer as a handle (the host answers primitives only). */
function handleOf(context: QuickJSContext, value: unknown): QuickJSHandle {
  if (value === true) return context.true;
  if (value === false) return context.false;
  if (typeof value === "number") return context.newNumber(value);
  if (typeof value === "string") return context.newString(value);
  return context.undefined;
}

/** The JSContext's address in the module's memory. */
function contextPointer(context: QuickJSContext): number {
  const lifetime = (context as unknown as { ctx: { value: number } }).ctx;
  return lifetime.value;
}

/**
 * Where this context keeps `Math.random`'s xorshift state (8 bytes inside
 * the JSContext), found by watching which aligned pair of words every call
 * changes, and checked: the same seed written there gives the same number,
 * another seed another. The image would otherwise give every run the same
 * sequence. Throws when the build does not behave like that (a different
 * QuickJS than the pinned one).
 */
function calibrateRandomState(context: QuickJSContext, memory: WasmMemory): number {
  const base = contextPointer(context);
  const span = 1024;
  const random = context.unwrapResult(context.evalCode("Math.random", "calibrate.js", { type: "global" }));
  const read = () => new Uint32Array(memory.buffer, base, span).slice();
  const call = (): number => {
    const value = context.unwrapResult(context.callFunction(random, context.undefined));
    const number = context.getNumber(value);
    value.dispose();
    return number;
  };
  let candidates: number[] | undefined;
  for (let round = 0; round < 3; round++) {
    const before = read();
    call();
    const after = read();
    const changed: number[] = [];
    for (let i = 0; i < span; i += 2)
      if (before[i] !== after[i] || before[i + 1] !== after[i + 1]) changed.push(i);
    candidates = candidates === undefined ? changed : candidates.filter((i) => changed.includes(i));
  }
  const words = () => new Uint32Array(memory.buffer);
  for (const index of candidates ?? []) {
    const at = base + index * 4;
    const write = (a: number, b: number) => {
      words()[at >> 2] = a;
      words()[(at >> 2) + 1] = b;
    };
    const saved = [words()[at >> 2] as number, words()[(at >> 2) + 1] as number] as const;
    write(0x1234567, 0x89abcde);
    const first = call();
    write(0x1234567, 0x89abcde);
    const again = call();
    write(0x7654321, 0xedcba98);
    const other = call();
    write(saved[0], saved[1]);
    if (first === again && first !== other) {
      random.dispose();
      return at;
    }
  }
  random.dispose();
  throw new Error("QuickJS's Math.random state was not found in its context: not the pinned build");
}

/**
 * Where the heap ends in `image`. Emscripten's allocator (dlmalloc) keeps
 * the start of its top chunk — the free space every new allocation is cut
 * from — in a static word, found here as the word that moves up with two
 * large allocations made after the image was taken (by at least each one's
 * size, never past the memory's end). The heap ends where the top chunk
 * does: its start plus its size (its header's first word) plus the footer
 * the allocator writes past it. Memory past that is free to the restored
 * allocator whatever it holds (the kernel's compile left some there when the
 * allocator gave memory back). Falls back to the whole image.
 */
function heapEnd(
  context: QuickJSContext,
  memory: WasmMemory,
  image: Uint8Array,
): { end: number; topAt: number } {
  const scanWords = Math.min(image.byteLength, 4 * 1024 * 1024) >> 2;
  const before = new Uint32Array(image.buffer, 0, scanWords);
  const grown = (size: number, name: string): Uint32Array => {
    context
      .evalCode(`globalThis.${name} = "x".repeat(${size}); ${name}.charCodeAt(1); 0`, "calibrate.js", {
        type: "global",
      })
      .dispose();
    return new Uint32Array(memory.buffer, 0, scanWords).slice();
  };
  const first = 2 * 1024 * 1024;
  const second = 3 * 1024 * 1024;
  const afterFirst = grown(first, "__probe1");
  const afterSecond = grown(second, "__probe2");
  const limit = memory.buffer.byteLength;
  let top = 0;
  let topAt = -1;
  for (let i = 0; i < scanWords; i++) {
    const was = before[i] as number;
    const one = afterFirst[i] as number;
    const two = afterSecond[i] as number;
    if (was > 0 && was + 8 <= image.byteLength && one >= was + first && two >= one + second && two <= limit) {
      if (topAt >= 0) return { end: image.byteLength, topAt: -1 }; // not one word: do not guess
      top = was;
      topAt = i * 4;
    }
  }
  if (topAt < 0) return { end: image.byteLength, topAt: -1 };
  const words = new Uint32Array(image.buffer, 0, image.byteLength >> 2);
  // The top chunk's header: [prev_foot][size | flags]; the footer sits right past its end.
  const size = (words[(top + 4) >> 2] as number) & ~7;
  return { end: Math.min(image.byteLength, top + size + TOP_FOOTER_BYTES), topAt };
}

/**
 * What a restore copies: the image up to the heap's end (see {@link heapEnd}),
 * less the longest run of zero pages below the heap — the unused part of the
 * module's stack (emscripten puts a 5 MiB stack between the static data and
 * the heap). No frame is live between calls, so whatever a run left on the
 * stack is dead; a heap allocation can lie there only above the first
 * allocation of all (the runtime's), which bounds the run.
 */
function restoreImage(
  context: QuickJSContext,
  runtime: QuickJSRuntime,
  memory: WasmMemory,
  whole: Uint8Array,
): RestoreImage {
  const { end, topAt } = heapEnd(context, memory, whole);
  const heapFloor = Math.min(runtimePointer(runtime), contextPointer(context));
  let bestStart = 0;
  let bestEnd = 0;
  let runStart = -1;
  for (let page = 0; (page + 1) * PAGE <= heapFloor; page++) {
    let zero = true;
    const words = new Uint32Array(whole.buffer, page * PAGE, PAGE / 4);
    for (let i = 0; i < words.length; i++) {
      if (words[i] !== 0) {
        zero = false;
        break;
      }
    }
    if (zero) {
      if (runStart < 0) runStart = page * PAGE;
      if ((page + 1) * PAGE - runStart > bestEnd - bestStart) {
        bestStart = runStart;
        bestEnd = (page + 1) * PAGE;
      }
    } else runStart = -1;
  }
  const parts =
    bestEnd > bestStart
      ? [
          { at: 0, bytes: whole.slice(0, bestStart) },
          { at: bestEnd, bytes: whole.slice(bestEnd, end) },
        ]
      : [{ at: 0, bytes: whole.slice(0, end) }];
  const top = topAt < 0 ? -1 : (new Uint32Array(whole.buffer)[topAt >> 2] as number);
  return { parts, end, topAt, top };
}

/** The JSRuntime's address in the module's memory. */
function runtimePointer(runtime: QuickJSRuntime): number {
  return (runtime as unknown as { rt: { value: number } }).rt.value;
}
