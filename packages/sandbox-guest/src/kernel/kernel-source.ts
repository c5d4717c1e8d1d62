import { installCodec } from "../codec/install-codec.js";
import { installCalls } from "./install-calls.js";
import { installConsole } from "./install-console.js";
import { installErrors } from "./install-errors.js";
import { installHardening } from "./install-hardening.js";
import { installInspect } from "./install-inspect.js";
import { installRealm } from "./install-realm.js";
import { installSettle } from "./install-settle.js";
import { installTimers } from "./install-timers.js";
import { installUrl } from "./install-url.js";
import { installWebGlobals } from "./install-web-globals.js";
import type { KernelConfig } from "./kernel-kit.js";

/** File name guest code is compiled under: the only frames a guest stack shows. */
export const GUEST_FILENAME = "sandbox.js";
/** Prefix of the file names of registered source modules. */
export const MODULE_FILENAME_PREFIX = "sandbox-module:";

/** What a realm puts before a source module's text (on line 1, so lines stay the same). */
export const MODULE_WRAPPER_OPEN = "(function (module, exports) {";
/** What a realm puts after it. */
export const MODULE_WRAPPER_CLOSE = "\n})";

/** The parts, in install order. Each is a self-contained `(kit) => void`. */
const PARTS: readonly ((kit: never) => void)[] = [
  installRealm,
  // Before the codec and inspect: an Error they make while installing is formatted by the
  // kernel's own prepareStackTrace, not by a call out to the host's.
  installErrors,
  installCodec,
  installInspect,
  installConsole,
  installTimers,
  installWebGlobals,
  installUrl,
  installCalls,
  installSettle,
  installHardening,
];

/**
 * 32 bytes from the host's CSPRNG as hex: a realm's `entropy` (see
 * {@link kernelConfig}), or what a realm restored from an image is renewed with. Web Crypto's global rather than `node:crypto`: the
 * spawn runner's bundle imports no `crypto` module (its start-up is measured), and the global
 * loads on the first call only, which in a spawn child is its warm-up run.
 */
export function hostEntropy(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
  let hex = "";
  for (const byte of bytes) hex += (byte < 16 ? "0" : "") + byte.toString(16);
  return hex;
}

/**
 * The kernel's configuration for ONE realm: call it at each realm's boot and
 * never reuse or cache its result (nor bake it into a snapshot or code cache),
 * as its `entropy` keys that realm's `crypto` and two realms must never share
 * a keystream.
 */
export function kernelConfig(limits: Pick<KernelConfig, "maxTimers" | "maxTimerCreations">): KernelConfig {
  return {
    guestFilename: GUEST_FILENAME,
    moduleFilenamePrefix: MODULE_FILENAME_PREFIX,
    moduleWrapperLength: MODULE_WRAPPER_OPEN.length,
    ...limits,
    entropy: hostEntropy(),
  };
}

/**
 * The kernel as one classic script, stitched from the typed parts. It binds
 * the kernel to the script-scope name `binding` (a lexical binding, so it is
 * never a property of the global object; callers make the name unguessable)
 * and completes with `install(bridge, configJson) => entries`. Realms that can
 * call guest functions and have their microtasks run (isolated-vm) use the
 * returned entries; `node:vm` realms run `${binding}.enter(name)` as a script,
 * which reads the arguments through the bridge (`argc`, `arg`).
 */
export function buildKernelSource(binding: string): string {
  const parts = PARTS.map((part) => `    (${part.toString()})(kit);`).join("\n");
  return `"use strict";
const ${binding} = (() => {
  const apply = Reflect.apply;
  const freeze = Object.freeze;
  const parse = JSON.parse;
  let bridge = null;
  let entries = null;
  // Parenthesised so V8 compiles it (and the parenthesised parts in it) with the script, not on
  // its first call: a code cache made at compile time (isolated-vm's cachedData) then holds them.
  const install = (function install(hostBridge, configJson) {
    if (entries !== null) throw new TypeError("the kernel is installed already");
    bridge = hostBridge;
    // A dictionary-mode object (see the codec): named properties on an ordinary object cost a
    // hidden-class transition each in a fresh context.
    const kit = Object.create(null);
    kit.bridge = hostBridge;
    kit.config = parse(configJson);
${parts}
    entries = kit.entries;
    return entries;
  });
  function enter(name) {
    if (name === "teardown") {
      // The last entry: nothing of the kernel stays reachable from the context (see installRealm).
      const teardown = entries.teardown;
      entries = null;
      bridge = null;
      teardown();
      return undefined;
    }
    const fn = entries[name];
    // Array literals define their elements: no setter a guest put on Array.prototype runs here.
    const count = bridge("argc");
    const a = count > 0 ? bridge("arg", 0) : undefined;
    const b = count > 1 ? bridge("arg", 1) : undefined;
    const c = count > 2 ? bridge("arg", 2) : undefined;
    return apply(fn, undefined, count === 0 ? [] : count === 1 ? [a] : count === 2 ? [a, b] : [a, b, c]);
  }
  return freeze({ install, enter });
})();
${binding}.install;
`;
}
