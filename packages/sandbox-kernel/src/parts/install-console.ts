import type { KernelKit } from "../kit.js";
import type { CallsKit } from "./install-calls.js";

/**
 * GUEST REALM. `console` with `log`, `info`, `warn`, `error`, `debug` and
 * `trace` (reported as `debug`, without a stack). Arguments are formatted in
 * the guest realm by `kit.format` (util.format rules) and sent as one line of
 * text, cut near `runConfig.maxLogChars` characters (see `format`); once the
 * host says the output budget is spent, later calls format nothing.
 */
export function installConsole(kit: KernelKit): void {
  const freeze = Object.freeze;
  const setPrototypeOf = Object.setPrototypeOf;
  const ObjectPrototype = Object.prototype;
  let open = true;
  const emit = (level: string, args: unknown[]): void => {
    if (!open) return;
    let text: string;
    try {
      text = kit.format(args, undefined, (kit as KernelKit & Partial<CallsKit>).runConfig?.maxLogChars);
    } catch {
      text = "[console arguments could not be formatted]";
    }
    let accepted: unknown;
    try {
      accepted = kit.bridge("log", level, text);
    } catch {
      accepted = false;
    }
    if (accepted !== true) open = false;
  };
  // Built with a null prototype and given Object.prototype after: in a fresh context an object
  // literal on Object.prototype costs a new hidden class per property (~3 µs each); one made
  // with `__proto__: null` starts as a dictionary.
  const methods = {
    __proto__: null,
    log(...args: unknown[]): void {
      emit("log", args);
    },
    info(...args: unknown[]): void {
      emit("info", args);
    },
    warn(...args: unknown[]): void {
      emit("warn", args);
    },
    error(...args: unknown[]): void {
      emit("error", args);
    },
    debug(...args: unknown[]): void {
      emit("debug", args);
    },
    trace(...args: unknown[]): void {
      emit("debug", args);
    },
  };
  kit.defineGlobal("console", freeze(setPrototypeOf(methods, ObjectPrototype)));
  const end = kit.entries.end;
  kit.entries.end = () => {
    open = false;
    if (end !== undefined) end();
  };
}
