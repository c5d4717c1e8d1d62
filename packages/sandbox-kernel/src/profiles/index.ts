import type { KernelPart } from "../create-kernel.js";
import { V8_PARTS } from "./v8.js";

/**
 * The kernel profiles: which parts a realm installs, as data. An engine names its profile
 * (`buildKernelSource(binding, profile)` in `@suaveplan/sandbox-guest`); the build bundles each
 * profile once into the one script its realms evaluate (`@suaveplan/sandbox-kernel/sources`).
 *
 * - `v8`: every part, with errors formatted through V8's stack-trace API. V8 realms (vm,
 *   worker, spawn, isolate) and QuickJS-ng (quickjs) use it.
 *
 * A new profile is a new file here listing its parts, plus its entry (`<name>.entry.ts`) —
 * an engine without V8's stack-trace API would list an errors part that reads `stack` text
 * instead of call sites.
 */
export const KERNEL_PROFILES = Object.freeze({ v8: V8_PARTS }) satisfies Readonly<
  Record<string, readonly KernelPart[]>
>;

/** A profile's name. */
export type KernelProfileName = keyof typeof KERNEL_PROFILES;
