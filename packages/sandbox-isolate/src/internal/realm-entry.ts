import { capWasmMemorySource, type KernelBridge } from "@suaveplan/sandbox-guest/realm";
import { hardenIsolateRealm } from "./harden-isolate-realm.js";

/** The kernel's `install(bridge, configJson) => entries`. */
type KernelInstall = (
  bridge: KernelBridge,
  configJson: string,
) => Record<string, (...args: unknown[]) => unknown>;

/**
 * The one guest-realm function the host calls: a kernel entry by name. It returns false when the
 * entry itself threw, `kind:payload` when the entry reported the run's outcome before it returned
 * (see {@link createRealmEnter}), and true otherwise.
 */
export type RealmEnter = (name: string, a?: unknown, b?: unknown, c?: unknown) => boolean | string;

/**
 * GUEST REALM (isolated-vm only), stringified like the kernel parts. Installs
 * the kernel with the host's bridge (an isolated-vm `Callback`, a plain
 * function in here) and returns `enter`, which the host holds by `Reference`
 * and calls for every entry. `enter` returns whether the entry returned or
 * threw, so the host can tell a kernel failure (the entries catch whatever
 * guest code throws) from the rejection nobody handled that isolated-vm
 * throws to the call instead of its result. Neither `enter`, the entries nor
 * the bridge is reachable from guest code: they live in this closure only.
 *
 * An outcome the entry reports before it returns (a value settled at once, a
 * synchronous throw) is held and returned as `kind:payload` instead of going
 * through the bridge: from an async call, each bridge call is a round trip to
 * the host's thread and back. Everything else, and an outcome reported later
 * (from the microtasks isolated-vm runs after the entry), takes the bridge.
 * The host delivers the returned outcome when the call returns, after every
 * bridge call the entry made, so nothing reported before it is overtaken.
 *
 * A guest→host call goes through `queued` (an isolated-vm callback the
 * isolate's thread does not wait for) as `callQueued`, and counts as accepted
 * here: a call the host refuses comes back as a failed reply. One call is
 * then one round trip (the reply), not two. isolated-vm runs the tasks this
 * thread posts to the host's in order, so the call reaches the host before
 * anything the guest does after it, the run's outcome included.
 */
export function createRealmEnter(
  install: KernelInstall,
  bridge: KernelBridge,
  queued: KernelBridge,
  configJson: string,
): RealmEnter {
  const apply = Reflect.apply;
  let inEntry = false;
  let held: string | undefined;
  const entries = install((op, a, b, c) => {
    if (op === "done" && inEntry && held === undefined && typeof a === "string" && typeof b === "string") {
      held = `${a}:${b}`;
      return undefined;
    }
    if (op === "call") {
      queued("callQueued", a, b, c);
      return true;
    }
    return bridge(op, a, b, c);
  }, configJson);
  return function enter(name: string, a?: unknown, b?: unknown, c?: unknown): boolean | string {
    const entry = entries[name];
    if (typeof entry !== "function") return false;
    held = undefined;
    inEntry = true;
    try {
      // An array literal defines its elements: no setter on Array.prototype runs here.
      apply(entry, undefined, [a, b, c]);
    } catch {
      return false;
    } finally {
      inEntry = false;
    }
    const report = held;
    held = undefined;
    return report === undefined ? true : report;
  };
}

/**
 * The realm script of an isolate with `memoryLimitMiB`, run in each fresh
 * context before the kernel: it hardens the context (Wasm memory capped at the
 * limit) and completes with {@link createRealmEnter}.
 */
export function realmSource(memoryLimitMiB: number): string {
  return `${capWasmMemorySource(memoryLimitMiB * 1024 * 1024, true)}(${hardenIsolateRealm.toString()})();\n(${createRealmEnter.toString()});\n`;
}
