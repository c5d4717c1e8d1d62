import type { KernelKit } from "./kernel-kit.js";

/**
 * GUEST REALM. `console` with `log`, `info`, `warn`, `error`, `debug` and
 * `trace` (reported as `debug`, without a stack). Arguments are formatted in
 * the guest realm by `kit.format` (util.format rules) and sent as one line of
 * text; once the host says the output budget is spent, later calls format
 * nothing.
 */
export function installConsole(kit: KernelKit): void {
  const freeze = Object.freeze;
  let open = true;
  const emit = (level: string, args: unknown[]): void => {
    if (!open) return;
    let text: string;
    try {
      text = kit.format(args);
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
  kit.defineGlobal(
    "console",
    freeze({
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
    }),
  );
  const end = kit.entries.end;
  kit.entries.end = () => {
    open = false;
    if (end !== undefined) end();
  };
}
