import { types } from "node:util";

// Captured once: host code never looks these up again on a value the guest may control.
const { getPrototypeOf } = Object;
const { isProxy } = types;
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
