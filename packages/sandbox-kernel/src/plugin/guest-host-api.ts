import type { GuestKit } from "./guest-kit.js";

/** The guest functions the worker host holds. Every argument and return value is a primitive. */
export interface GuestHostApi {
  registerSource(identifier: string, source: string): void;
  /** A fresh guest-realm coded error, for the host to throw back into guest code unchanged. */
  makeError(code: string, message: string): unknown;
  /** Hold the plugin's module namespace (a guest object the host never inspects). */
  setNamespace(namespace: unknown): void;
  /** Queue: report `loaded` with the function export names, or the evaluation error. */
  queueLoaded(ok: boolean, error: unknown): void;
  /** Queue: call export `name` with decoded `payload` args; report `result.ok` / `result.error`. */
  queueCall(id: number, name: string, payload: string): void;
  /** Queue: settle proxy request `id`. */
  queueSettle(id: number, ok: boolean, payload: string): void;
}

/**
 * GUEST REALM. Builds the object the host keeps. The `queue*` functions only enqueue a guest
 * microtask; the host then runs the context's microtask queue under the vm `timeout`, so plugin
 * code only ever runs inside a timed drain.
 */
export function createGuestHostApi(kit: GuestKit): GuestHostApi {
  const resolved = Promise.resolve();
  const then = Promise.prototype.then;
  const apply = Reflect.apply;
  const queue = (task: () => void) => {
    apply(then, resolved, [task]);
  };
  // `<what>.ok` with the value's text; `<what>.error` with a thrown value's, or `<what>.raised`
  // when the sandbox itself raised it (the host keeps its code as its own).
  const report = (what: "loaded" | "result", a: number | boolean, ok: boolean, value: unknown) => {
    if (ok) {
      try {
        kit.call(`${what}.ok`, a, kit.copyOut(value, what === "result" ? "result" : "exports"));
        return;
      } catch (error) {
        value = error;
      }
    }
    const { text, raised } = kit.thrownOut(value);
    kit.call(raised ? `${what}.raised` : `${what}.error`, a, text);
  };
  let namespace: Record<string, unknown> = {};

  return {
    registerSource(identifier, source) {
      kit.registerSource(identifier, source);
    },
    makeError(code, message) {
      return kit.makeError(code, message);
    },
    setNamespace(ns) {
      namespace = ns as Record<string, unknown>;
    },
    queueLoaded(ok, error) {
      queue(() => {
        if (!ok) {
          report("loaded", false, false, error);
          return;
        }
        const names = Object.keys(namespace).filter((name) => typeof namespace[name] === "function");
        report("loaded", true, true, names);
      });
    },
    queueCall(id, name, payload) {
      queue(() => {
        const fn = namespace[name];
        if (typeof fn !== "function") {
          report(
            "result",
            id,
            false,
            kit.makeError(
              "SAND_VM_EXPORT_NOT_FOUND",
              `the plugin has no function export ${JSON.stringify(name)}`,
            ),
          );
          return;
        }
        new Promise((resolve) =>
          resolve(apply(fn as (...args: unknown[]) => unknown, undefined, kit.decode(payload) as unknown[])),
        ).then(
          (value) => report("result", id, true, value),
          (error: unknown) => report("result", id, false, error),
        );
      });
    },
    queueSettle(id, ok, payload) {
      queue(() => kit.settle(id, ok, payload));
    },
  };
}

/**
 * GUEST REALM. The last part of the `plugin` profile, after the lockdown: the object the host
 * keeps, as what the kernel's `install` returns.
 */
export function installGuestHostApi(kit: GuestKit): void {
  kit.entries = createGuestHostApi(kit);
}
