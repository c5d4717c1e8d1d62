import type { KernelKit } from "./kernel-kit.js";

/**
 * GUEST REALM. The web-standard globals of `GUEST_GLOBALS` (sandbox-core)
 * other than URL: implemented here, in the guest realm, with no host object
 * behind them.
 */
export function installWebGlobals(_kit: KernelKit): void {}
