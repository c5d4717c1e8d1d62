import type { KernelBridge, KernelKit } from "./kit.js";

/** One part of the kernel: adds what it provides to the kit, in install order. */
export type KernelPart = (kit: never) => void;

/** What a realm reaches the kernel through, once the kernel's script has run. */
export interface Kernel {
  /**
   * Install the parts into this realm with the host's `bridge` and the JSON of a
   * {@link KernelConfig}; returns the entries the host may call. Once per realm.
   */
  install(bridge: KernelBridge, configJson: string): KernelKit["entries"];
  /**
   * Call the entry `name`, reading its arguments through the bridge (`argc`, `arg`): how
   * `node:vm` realms call in, as a script. `teardown` is the last entry: after it nothing of
   * the kernel stays reachable from the realm.
   */
  enter(name: string): unknown;
}

/**
 * GUEST REALM. The kernel over `parts`: the only code of this package that runs at a realm's
 * start, before any guest code, so every intrinsic it captures here is the realm's own.
 */
export function createKernel(parts: readonly KernelPart[]): Kernel {
  const apply = Reflect.apply;
  const freeze = Object.freeze;
  const parse = JSON.parse;
  let bridge: KernelBridge | null = null;
  let entries: KernelKit["entries"] | null = null;

  function install(hostBridge: KernelBridge, configJson: string): KernelKit["entries"] {
    if (entries !== null) throw new TypeError("the kernel is installed already");
    bridge = hostBridge;
    // A dictionary-mode object (see the codec): named properties on an ordinary object cost a
    // hidden-class transition each in a fresh context.
    const kit = Object.create(null) as KernelKit;
    kit.bridge = hostBridge;
    kit.config = parse(configJson);
    for (let i = 0; i < parts.length; i++) (parts[i] as (kit: KernelKit) => void)(kit);
    entries = kit.entries;
    return entries;
  }

  function enter(name: string): unknown {
    if (name === "teardown") {
      // The last entry: nothing of the kernel stays reachable from the context (see installRealm).
      const teardown = (entries as KernelKit["entries"]).teardown as () => void;
      entries = null;
      bridge = null;
      teardown();
      return undefined;
    }
    const fn = (entries as KernelKit["entries"])[name] as (...args: unknown[]) => unknown;
    const call = bridge as KernelBridge;
    // Array literals define their elements: no setter a guest put on Array.prototype runs here.
    const count = call("argc") as number;
    const a = count > 0 ? call("arg", 0) : undefined;
    const b = count > 1 ? call("arg", 1) : undefined;
    const c = count > 2 ? call("arg", 2) : undefined;
    return apply(fn, undefined, count === 0 ? [] : count === 1 ? [a] : count === 2 ? [a, b] : [a, b, c]);
  }

  return freeze({ install, enter });
}
