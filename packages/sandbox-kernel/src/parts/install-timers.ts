import type { KernelKit } from "../kit.js";

/**
 * GUEST REALM. `setTimeout`, `setInterval`, `clearTimeout`, `clearInterval`
 * and `queueMicrotask` as guest-realm functions. Each timer is a host timer
 * owned by the execution (the host enforces the count limits and clears every
 * timer when the run ends); the callback stays in the guest realm and runs
 * when the host calls the `fire` entry. A callback that throws fails the run,
 * as an uncaught exception ends a Node program. Code strings are refused.
 */
export function installTimers(kit: KernelKit): void {
  const { apply } = Reflect;
  const MapCtor = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const mapClear = Map.prototype.clear;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const NumberCtor = Number;
  const MAX_DELAY_MS = 2_147_483_647;

  interface Timer {
    fn: (...args: unknown[]) => unknown;
    args: unknown[];
    repeat: boolean;
  }
  const timers: Map<number, Timer> = new MapCtor();
  let nextId = 1;

  const add = (fn: unknown, delay: unknown, args: unknown[], repeat: boolean): number => {
    if (typeof fn !== "function") {
      throw new TypeErrorCtor(
        'The "callback" argument must be of type function; code strings are not evaluated in the sandbox',
      );
    }
    let ms = NumberCtor(delay);
    if (!(ms >= 1 && ms <= MAX_DELAY_MS)) ms = 1;
    const id = nextId++;
    let accepted: unknown;
    try {
      accepted = kit.bridge("timer", id, ms, repeat);
    } catch {
      accepted = false;
    }
    if (accepted !== true) {
      throw new RangeErrorCtor(
        typeof accepted === "string" ? accepted : "No more timers can be created in this execution",
      );
    }
    apply(mapSet, timers, [id, { fn, args, repeat }]);
    return id;
  };
  const clear = (id: unknown): void => {
    if (typeof id !== "number") return;
    if (apply(mapDelete, timers, [id]) === true) {
      try {
        kit.bridge("clear", id);
      } catch {
        // The bridge never throws; a failed clear only means the host fires a timer nobody waits for.
      }
    }
  };

  kit.defineGlobal(
    "setTimeout",
    function setTimeout(fn: unknown, delay?: unknown, ...args: unknown[]): number {
      return add(fn, delay, args, false);
    },
  );
  kit.defineGlobal(
    "setInterval",
    function setInterval(fn: unknown, delay?: unknown, ...args: unknown[]): number {
      return add(fn, delay, args, true);
    },
  );
  kit.defineGlobal("clearTimeout", function clearTimeout(id?: unknown): void {
    clear(id);
  });
  kit.defineGlobal("clearInterval", function clearInterval(id?: unknown): void {
    clear(id);
  });
  kit.defineGlobal("queueMicrotask", function queueMicrotask(fn: unknown): void {
    if (typeof fn !== "function") throw new TypeErrorCtor('The "callback" argument must be of type function');
    // `await`, not `.then()`: it never looks up `constructor` or `Symbol.species`, which guest code may redefine.
    void (async () => {
      await undefined;
      try {
        apply(fn as () => unknown, undefined, []);
      } catch (error) {
        kit.reportError(error);
      }
    })();
  });

  kit.entries.fire = (id: number) => {
    const timer = apply(mapGet, timers, [id]) as Timer | undefined;
    if (timer === undefined) return;
    if (!timer.repeat) apply(mapDelete, timers, [id]);
    try {
      apply(timer.fn, undefined, timer.args);
    } catch (error) {
      kit.reportError(error);
    }
  };
  const end = kit.entries.end;
  kit.entries.end = () => {
    apply(mapClear, timers, []);
    if (end !== undefined) end();
  };
}
