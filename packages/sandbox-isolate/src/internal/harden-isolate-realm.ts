/**
 * GUEST REALM (isolated-vm only). Run in every fresh context before the
 * shared kernel, after the shared Wasm memory cap (`capWasmMemory`, which
 * also makes `WebAssembly.compile` / `instantiate` compile synchronously),
 * stringified with `Function.prototype.toString`, so it uses only ECMAScript
 * built-ins of the context it runs in.
 *
 * V8 runs `Atomics.waitAsync` wake-ups and the continuations of async
 * WebAssembly compilation as isolate tasks, outside any timed isolate call:
 * on the next entry into the isolate (the host's synchronous context creation
 * for the next run, say), where a guest loop would block the host thread for
 * good, or after the context was released, where a late `waitAsync` timeout
 * aborted the host process. `Atomics.waitAsync` is removed here. (The kernel
 * removes `FinalizationRegistry`, whose cleanups run the same way.)
 */
export function hardenIsolateRealm(): void {
  Reflect.deleteProperty(Atomics, "waitAsync");
}
