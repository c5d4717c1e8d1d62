import type { KernelConfig, KernelProfileName } from "@suaveplan/sandbox-kernel";
import { KERNEL_SOURCES } from "@suaveplan/sandbox-kernel/sources";

/** File name guest code is compiled under: the only frames a guest stack shows. */
export const GUEST_FILENAME = "sandbox.js";
/** Prefix of the file names of registered source modules. */
export const MODULE_FILENAME_PREFIX = "sandbox-module:";

/** What a realm puts before a source module's text (on line 1, so lines stay the same). */
export const MODULE_WRAPPER_OPEN = "(function (module, exports) {";
/** What a realm puts after it. */
export const MODULE_WRAPPER_CLOSE = "\n})";

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
 * The kernel as one classic script: the bundle of `profile` (see `KERNEL_PROFILES` in
 * `@suaveplan/sandbox-kernel`), bound to the script-scope name `binding` (a lexical binding,
 * so it is never a property of the global object; callers make the name unguessable), and
 * completing with `install(bridge, configJson) => entries`. Realms that can call guest
 * functions and have their microtasks run (isolated-vm, QuickJS) use the returned entries;
 * `node:vm` realms run `${binding}.enter(name)` as a script, which reads the arguments through
 * the bridge (`argc`, `arg`).
 */
export function buildKernelSource(binding: string, profile: KernelProfileName = "v8"): string {
  const bundle: string | undefined = KERNEL_SOURCES[profile];
  if (bundle === undefined) {
    // The worker engine's entry is built without the bundles: its host hands the kernel over.
    throw new Error(
      `the kernel profile "${profile}" is not bundled into this build; pass its text to useKernelScript`,
    );
  }
  return `${kernelSourceHead(binding)}(() => {\n${bundle}})();\n${binding}.install;\n`;
}

/** How {@link buildKernelSource}'s text for `binding` begins. */
export function kernelSourceHead(binding: string): string {
  return `"use strict";\nconst ${binding} = `;
}
