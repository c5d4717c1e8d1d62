import type { KernelBridge } from "@suaveplan/sandbox-guest";
import { hardenIsolateRealm } from "./harden-isolate-realm.js";

/** The kernel's `install(bridge, configJson) => entries`. */
type KernelInstall = (
  bridge: KernelBridge,
  configJson: string,
) => Record<string, (...args: unknown[]) => unknown>;

/** The one guest-realm function the host calls: a kernel entry by name; false when the entry itself threw. */
export type RealmEnter = (name: string, a?: unknown, b?: unknown, c?: unknown) => boolean;

/**
 * GUEST REALM (isolated-vm only), stringified like the kernel parts. Installs
 * the kernel with the host's bridge (an isolated-vm `Callback`, a plain
 * function in here) and returns `enter`, which the host holds by `Reference`
 * and calls for every entry. `enter` returns whether the entry returned or
 * threw, so the host can tell a kernel failure (the entries catch whatever
 * guest code throws) from the rejection nobody handled that isolated-vm
 * throws to the call instead of its result. Neither `enter`, the entries nor
 * the bridge is reachable from guest code: they live in this closure only.
 */
export function createRealmEnter(
  install: KernelInstall,
  bridge: KernelBridge,
  configJson: string,
): RealmEnter {
  const apply = Reflect.apply;
  const entries = install(bridge, configJson);
  return function enter(name: string, a?: unknown, b?: unknown, c?: unknown): boolean {
    const entry = entries[name];
    if (typeof entry !== "function") return false;
    try {
      // An array literal defines its elements: no setter on Array.prototype runs here.
      apply(entry, undefined, [a, b, c]);
      return true;
    } catch {
      return false;
    }
  };
}

/**
 * The realm script of an isolate with `memoryLimitMiB`, run in each fresh
 * context before the kernel: it hardens the context (Wasm memory capped at the
 * limit) and completes with {@link createRealmEnter}.
 */
export function realmSource(memoryLimitMiB: number): string {
  return `"use strict";\n(${hardenIsolateRealm.toString()})(${memoryLimitMiB * 1024 * 1024});\n(${createRealmEnter.toString()});\n`;
}
