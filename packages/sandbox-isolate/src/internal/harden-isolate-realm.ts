/**
 * GUEST REALM (isolated-vm only). Run in every fresh context before the
 * shared kernel, stringified with `Function.prototype.toString`, so it uses
 * only ECMAScript built-ins of the context it runs in.
 *
 * V8 runs `Atomics.waitAsync` wake-ups and the continuations of async
 * WebAssembly compilation as isolate tasks, outside any timed isolate call:
 * on the next entry into the isolate (the host's synchronous context creation
 * for the next run, say), where a guest loop would block the host thread for
 * good, or after the context was released, where a late `waitAsync` timeout
 * aborted the host process. `Atomics.waitAsync` is removed, and
 * `WebAssembly.compile` / `instantiate` compile synchronously inside the
 * timed call. (The kernel removes `FinalizationRegistry`, whose cleanups run
 * the same way.)
 */
export function hardenIsolateRealm(): void {
  interface Wasm {
    Module: (new (bytes: unknown) => object) & { exports(module: unknown): unknown };
    Instance: new (module: object, imports?: unknown) => object;
  }
  const { defineProperty, deleteProperty } = Reflect;
  deleteProperty(Atomics, "waitAsync");
  const wasm = (globalThis as { WebAssembly?: Wasm }).WebAssembly;
  if (typeof wasm !== "object") return;
  const WasmModule = wasm.Module;
  const WasmInstance = wasm.Instance;
  const moduleExports = WasmModule.exports;
  const define = (name: string, value: unknown): void => {
    defineProperty(wasm, name, { value, writable: true, enumerable: false, configurable: true });
  };
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
    if (isModule) return new WasmInstance(source as object, imports);
    const module = new WasmModule(source);
    return { module, instance: new WasmInstance(module, imports) };
  });
}
