import { types } from "node:util";

// Captured once: host code never looks these up again on a value the guest may control.
const { getOwnPropertyDescriptor, getPrototypeOf } = Object;
const { isNativeError, isProxy } = types;
const HostErrorPrototype = Error.prototype;

/**
 * True when `value` is an Error created by the host realm (e.g. node's
 * "Script execution timed out"). Never runs guest code: proxies are refused
 * before their traps could run, and only prototypes are compared.
 */
export function isHostError(value: unknown): value is Error & { code?: unknown } {
  if (typeof value !== "object" || value === null || isProxy(value)) return false;
  for (let proto = getPrototypeOf(value); proto !== null; proto = getPrototypeOf(proto)) {
    if (proto === HostErrorPrototype) return true;
    if (isProxy(proto)) return false;
  }
  return false;
}

/** True when `value` is node's vm timeout error. */
export function isHostTimeout(value: unknown): boolean {
  return isHostError(value) && Object.hasOwn(value, "code") && value.code === "ERR_SCRIPT_EXECUTION_TIMEOUT";
}

/**
 * True when `value` is node's vm error for code stopped by SIGINT
 * (`breakOnSigint`). Node makes it in the context's realm, so it is recognised
 * by its own `code` data property on a native error; no guest code runs (no
 * proxy, no getter). Guest code could throw a look-alike, which only ends its
 * own run as cancelled.
 */
export function isSigintInterrupt(value: unknown): boolean {
  if (typeof value !== "object" || value === null || isProxy(value) || !isNativeError(value)) return false;
  const code = getOwnPropertyDescriptor(value, "code");
  return code !== undefined && "value" in code && code.value === "ERR_SCRIPT_EXECUTION_INTERRUPTED";
}
