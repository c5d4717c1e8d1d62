import type { KernelKit } from "./kernel-kit.js";

/**
 * GUEST REALM. The first part: how globals are defined, and the one channel
 * through which the outcome is reported. The host takes the first report; an
 * error reported later (an uncaught error in a timer, an unhandled rejection)
 * still wins over a value, as the host driver decides.
 */
export function installRealm(kit: KernelKit): void {
  const { defineProperty } = Reflect;
  const stringify = JSON.stringify;
  const G = globalThis;

  kit.entries = Object.create(null);
  kit.defineGlobal = (name, value) => {
    defineProperty(G, name, { value, writable: true, enumerable: false, configurable: true });
  };
  kit.report = (kind, payload) => {
    try {
      kit.bridge("done", kind, payload);
    } catch {
      // The bridge never throws; a lost report ends as the host's timeout.
    }
  };
  kit.reportError = (value) => {
    let text: string;
    try {
      text = stringify(kit.describeError(value));
    } catch {
      text = '{"name":"","message":"a value that could not be described","stack":""}';
    }
    kit.report("error", text);
  };
}
