import type { KernelKit } from "../kit.js";

/**
 * GUEST REALM. The last part: removes what would let guest code act after
 * its run (`FinalizationRegistry` callbacks run outside any timeout) and
 * freezes the entries the host keeps.
 */
export function installHardening(kit: KernelKit): void {
  const G = globalThis as { FinalizationRegistry?: unknown };
  delete G.FinalizationRegistry;
  Object.freeze(kit.entries);
}
