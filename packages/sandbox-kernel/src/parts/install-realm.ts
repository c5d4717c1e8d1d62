import type { KernelKit } from "../kit.js";

/**
 * GUEST REALM. The first part: how globals are defined, and the one channel
 * through which the outcome is reported. The host takes the first report; an
 * error reported later (an uncaught error in a timer, an unhandled rejection)
 * still wins over a value, as the host driver decides.
 */
export function installRealm(kit: KernelKit): void {
  const { defineProperty, deleteProperty, ownKeys } = Reflect;
  const stringify = JSON.stringify;
  const G = globalThis;

  kit.entries = Object.create(null);
  // One descriptor, reused: a null-prototype object (dictionary mode, no inherited keys), so
  // reading it runs nothing a guest defined and filling it costs no hidden-class transitions.
  const descriptor = Object.create(null) as PropertyDescriptor;
  descriptor.writable = true;
  descriptor.enumerable = false;
  descriptor.configurable = true;
  /** The names defineGlobal defined, for `teardown`. */
  const defined: string[] = Object.setPrototypeOf([], null);
  kit.defineGlobal = (name, value) => {
    descriptor.value = value;
    defineProperty(G, name, descriptor);
    descriptor.value = undefined;
    defined[defined.length] = name;
  };
  // After the run: drop what the kernel put on the global object. A dead context waits in the old
  // generation for a full GC, and until then whatever it points to survives every young-generation
  // GC; with the kernel's globals gone (and the kernel's own bindings, see the kernel source), only
  // the guest's own objects do.
  // Then empty the kit: closures the kernel left on intrinsics (Error.prepareStackTrace) reach it.
  kit.entries.teardown = () => {
    for (let i = 0; i < defined.length; i++) deleteProperty(G, defined[i] as string);
    defined.length = 0;
    const keys = ownKeys(kit);
    for (let i = 0; i < keys.length; i++) deleteProperty(kit, keys[i] as PropertyKey);
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
