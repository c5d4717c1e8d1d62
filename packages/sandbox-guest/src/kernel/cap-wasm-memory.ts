import type { GuestOutcome } from "../protocol/protocol.js";

/** How the sandbox's Wasm memory cap ends its RangeErrors (a run that ends with one uncaught ran out of memory). */
export const WASM_CAP_SUFFIX = "exceeds the sandbox's memory limit";

/**
 * GUEST REALM, stringified with `Function.prototype.toString` and run in each
 * fresh context before the kernel (isolate; the worker engine's `node:vm`
 * realm), so it uses only ECMAScript built-ins of the context it runs in.
 *
 * Wasm memory is allocated outside the memory a realm's engine can bound at
 * allocation (isolated-vm's accounting; a worker's heap limits), so it is
 * capped here: the context's Wasm memories together may reserve at most
 * `maxWasmBytes` (the run's memory limit). A `WebAssembly.Memory`
 * reserves its maximum — capped at what is left, which is its maximum when
 * none is given — when it is made (an `initial` above what is left throws),
 * `grow` past it throws, and a module's own memories are rewritten to at most
 * what is left before it compiles and reserved per instance (inside,
 * `memory.grow` past the maximum returns -1). With `syncCompile`,
 * `WebAssembly.compile` / `instantiate` compile synchronously, inside the
 * entry that called them (isolated-vm runs async compilation's continuations
 * outside any timed call); the `node:vm` realm, where Wasm code generation is
 * off, keeps its own. Each refusal is a RangeError whose message ends with
 * {@link WASM_CAP_SUFFIX}.
 */
export function capWasmMemory(maxWasmBytes: number, syncCompile: boolean): void {
  interface Wasm {
    Module: (new (bytes: unknown) => object) & { exports(module: unknown): unknown };
    Instance: new (module: object, imports?: unknown) => object;
    Memory: new (descriptor: unknown) => object;
  }
  const { apply, construct, defineProperty, getOwnPropertyDescriptor, getPrototypeOf } = Reflect;
  const wasm = (globalThis as { WebAssembly?: Wasm }).WebAssembly;
  if (typeof wasm !== "object") return;
  const OriginalModule = wasm.Module;
  const OriginalInstance = wasm.Instance;
  const OriginalMemory = wasm.Memory;
  const GuestRangeError = RangeError;
  const GuestUint8Array = Uint8Array;
  const isView = ArrayBuffer.isView;
  const floor = Math.floor;
  const min = Math.min;
  const toNumber = Number;
  const PAGE = 65_536;
  /** Wasm pages this context may still reserve: every memory reserves its (capped) maximum up front. */
  let budgetPages = floor(maxWasmBytes / PAGE);
  /** The pages each compiled module's own memories reserve per instance. */
  const modulePages = new WeakMap<object, number>();
  const getter = (target: object, key: string) =>
    (getOwnPropertyDescriptor(target, key) as PropertyDescriptor).get as (this: unknown) => unknown;
  const typedArrayPrototype = getPrototypeOf(GuestUint8Array.prototype) as object;
  const typedBuffer = getter(typedArrayPrototype, "buffer");
  const typedOffset = getter(typedArrayPrototype, "byteOffset");
  const typedLength = getter(typedArrayPrototype, "byteLength");
  const dataViewBuffer = getter(DataView.prototype, "buffer");
  const dataViewOffset = getter(DataView.prototype, "byteOffset");
  const dataViewLength = getter(DataView.prototype, "byteLength");
  const u8Length = getter(typedArrayPrototype, "length");
  const u8Set = (typedArrayPrototype as { set: (source: unknown, offset?: number) => void }).set;
  const refuse = (what: string): never => {
    throw new GuestRangeError(`${what} exceeds the sandbox's memory limit`);
  };
  /** A copy of a BufferSource's bytes (what is checked is what compiles), or undefined for anything else. */
  const copyBytes = (source: unknown): Uint8Array | undefined => {
    let view: Uint8Array;
    try {
      if (isView(source)) {
        let parts: unknown[];
        try {
          parts = [
            apply(typedBuffer, source, []),
            apply(typedOffset, source, []),
            apply(typedLength, source, []),
          ];
        } catch {
          parts = [
            apply(dataViewBuffer, source, []),
            apply(dataViewOffset, source, []),
            apply(dataViewLength, source, []),
          ];
        }
        view = construct(GuestUint8Array, parts) as Uint8Array;
      } else view = construct(GuestUint8Array, [source]) as Uint8Array;
    } catch {
      return undefined;
    }
    const copy = construct(GuestUint8Array, [apply(u8Length, view, [])]) as Uint8Array;
    apply(u8Set, copy, [view]);
    return copy;
  };
  /**
   * The module with every memory it defines capped at the pages left (rewritten), or the bytes as
   * they are when it defines none; `reserve.pages` is what one instance's memories take.
   */
  const capModuleMemory = (bytes: Uint8Array, reserve: { pages: number }): Uint8Array => {
    const maxPages = budgetPages;
    const size = apply(u8Length, bytes, []) as number;
    let at = 8;
    const leb = (): number => {
      let value = 0;
      let scale = 1;
      for (;;) {
        if (at >= size) throw new GuestRangeError("WebAssembly.Module(): truncated module");
        const byte = bytes[at++] as number;
        value += (byte & 0x7f) * scale;
        scale *= 128;
        if (byte < 0x80) return value;
      }
    };
    // Typed arrays only: their element writes run no setter a guest could have put on a prototype.
    const encode = (value: number, out: Uint8Array, cursor: { at: number }): void => {
      let rest = value;
      do {
        let byte = rest % 128;
        rest = floor(rest / 128);
        if (rest > 0) byte |= 0x80;
        out[cursor.at++] = byte;
      } while (rest > 0);
    };
    while (at < size) {
      const sectionStart = at;
      const id = bytes[at++] as number;
      const length = leb();
      const payloadStart = at;
      if (id !== 5) {
        at = payloadStart + length;
        continue;
      }
      const count = leb();
      // Each limit is at most 10 LEB bytes: the count, then flags, initial and maximum per memory.
      const payload = construct(GuestUint8Array, [10 + count * 30]) as Uint8Array;
      const written = { at: 0 };
      encode(count, payload, written);
      for (let i = 0; i < count; i++) {
        const flags = leb();
        const initial = leb();
        const declared = (flags & 1) === 1 ? leb() : 1 / 0;
        if (initial > maxPages) refuse("WebAssembly.Module(): a memory's initial size");
        encode(flags | 1, payload, written);
        encode(initial, payload, written);
        encode(min(declared, maxPages), payload, written);
        reserve.pages += min(declared, maxPages);
      }
      const header = construct(GuestUint8Array, [11]) as Uint8Array;
      const headerLength = { at: 1 };
      header[0] = 5;
      encode(written.at, header, headerLength);
      const tail = payloadStart + length;
      const out = construct(GuestUint8Array, [
        sectionStart + headerLength.at + written.at + (size - tail),
      ]) as Uint8Array;
      let to = 0;
      for (let i = 0; i < sectionStart; i++) out[to++] = bytes[i] as number;
      for (let i = 0; i < headerLength.at; i++) out[to++] = header[i] as number;
      for (let i = 0; i < written.at; i++) out[to++] = payload[i] as number;
      for (let i = tail; i < size; i++) out[to++] = bytes[i] as number;
      return out;
    }
    return bytes;
  };
  const WasmModule = function Module(this: unknown, source: unknown): object {
    if (new.target === undefined) return construct(OriginalModule, [source]) as object; // the TypeError V8 gives
    const bytes = copyBytes(source);
    const reserve = { pages: 0 };
    const module = construct(
      OriginalModule,
      [bytes === undefined ? source : capModuleMemory(bytes, reserve)],
      new.target,
    ) as object;
    modulePages.set(module, reserve.pages);
    return module;
  } as unknown as Wasm["Module"];
  const Memory = function Memory(this: unknown, descriptor: unknown): object {
    if (new.target === undefined || typeof descriptor !== "object" || descriptor === null)
      return construct(OriginalMemory, [descriptor]) as object;
    const { initial, maximum, shared } = descriptor as {
      initial?: unknown;
      maximum?: unknown;
      shared?: unknown;
    };
    // Each read once and as a number: V8 reads the clean copy, never the guest's object again.
    const initialPages = toNumber(initial);
    if (initialPages > budgetPages) refuse("WebAssembly.Memory(): the initial size");
    const maximumPages = maximum === undefined ? budgetPages : min(toNumber(maximum), budgetPages);
    const clean =
      shared === undefined
        ? { initial: initialPages, maximum: maximumPages }
        : { initial: initialPages, maximum: maximumPages, shared: !!shared };
    const memory = construct(OriginalMemory, [clean], new.target) as object;
    budgetPages -= maximumPages;
    return memory;
  } as unknown as Wasm["Memory"];
  const grow = (OriginalMemory.prototype as { grow: (delta: unknown) => number }).grow;
  const define = (name: string, value: unknown, on: object = wasm): void => {
    defineProperty(on, name, { value, writable: true, enumerable: false, configurable: true });
  };
  for (const [replacement, original] of [
    [WasmModule, OriginalModule],
    [Memory, OriginalMemory],
  ] as const) {
    defineProperty(replacement, "prototype", { value: original.prototype, writable: false });
    define("constructor", replacement, original.prototype);
    for (const key of ["exports", "imports", "customSections"]) {
      const own = getOwnPropertyDescriptor(original, key);
      if (own !== undefined) defineProperty(replacement, key, own);
    }
  }
  const Instance = function Instance(this: unknown, module: unknown, imports?: unknown): object {
    if (new.target === undefined) return construct(OriginalInstance, [module, imports]) as object;
    const pages = typeof module === "object" && module !== null ? modulePages.get(module) : undefined;
    if (pages !== undefined && pages > budgetPages) refuse("WebAssembly.Instance(): the module's memory");
    const instance = construct(OriginalInstance, [module, imports], new.target) as object;
    if (pages !== undefined) budgetPages -= pages;
    return instance;
  } as unknown as Wasm["Instance"];
  defineProperty(Instance, "prototype", { value: OriginalInstance.prototype, writable: false });
  define("constructor", Instance, OriginalInstance.prototype);
  define("Instance", Instance);
  define("Module", WasmModule);
  define("Memory", Memory);
  define(
    "grow",
    function grow_(this: unknown, delta: unknown): number {
      try {
        return apply(grow, this, [delta]) as number;
      } catch (error) {
        if (error instanceof GuestRangeError) refuse("WebAssembly.Memory.grow(): the grown memory");
        throw error;
      }
    },
    OriginalMemory.prototype,
  );
  if (!syncCompile) return;
  const moduleExports = OriginalModule.exports;
  define("compile", async function compile(bytes: unknown): Promise<object> {
    return new WasmModule(bytes);
  });
  define("instantiate", async function instantiate(source: unknown, imports?: unknown): Promise<object> {
    let isModule = true;
    try {
      moduleExports(source);
    } catch {
      isModule = false;
    }
    if (isModule) return new Instance(source as object, imports);
    const module = new WasmModule(source);
    return { module, instance: new Instance(module, imports) };
  });
}

/** The script that caps a fresh context's Wasm memory at `maxWasmBytes` (see {@link capWasmMemory}). */
export function capWasmMemorySource(maxWasmBytes: number, syncCompile: boolean): string {
  return `"use strict";\n(${capWasmMemory.toString()})(${maxWasmBytes}, ${syncCompile});\n`;
}

/**
 * True when a run ended, uncaught, with the RangeError of an allocation the
 * sandbox refused: isolated-vm's allocator past the isolate's limit
 * ("Array buffer allocation failed") or the Wasm cap ({@link WASM_CAP_SUFFIX}).
 * Such a run ran out of memory. (Guest code that catches it stayed within the
 * limit and ends as it chooses; a guest that throws the same error itself only
 * reports its own run as out of memory.)
 */
export function refusedAllocation(outcome: GuestOutcome): boolean {
  if (outcome.kind !== "error" || outcome.error.name !== "RangeError") return false;
  const { message } = outcome.error;
  return message === "Array buffer allocation failed" || message.endsWith(WASM_CAP_SUFFIX);
}
