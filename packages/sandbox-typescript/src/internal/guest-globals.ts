/**
 * The globals every engine's guest realm has besides the ECMAScript library:
 * the kernel's `console` and timers (see sandbox-guest's `install-console`
 * and `install-timers`). Timer ids are numbers there, not Node's `Timeout`.
 */
export const GUEST_GLOBALS = `declare const console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  trace(...data: unknown[]): void;
};
declare function setTimeout<A extends unknown[]>(callback: (...args: A) => void, delayMs?: number, ...args: A): number;
declare function setInterval<A extends unknown[]>(callback: (...args: A) => void, delayMs?: number, ...args: A): number;
declare function clearTimeout(id?: number): void;
declare function clearInterval(id?: number): void;
declare function queueMicrotask(callback: () => void): void;
`;
