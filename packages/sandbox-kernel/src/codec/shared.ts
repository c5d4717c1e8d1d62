/** The types every file of codec/ shares (erased). */

export type Uncurried = (self: unknown, ...args: unknown[]) => unknown;
export interface Descriptor {
  value?: unknown;
  get?: () => unknown;
  enumerable?: boolean;
  writable?: boolean;
  configurable?: boolean;
}
export type ErrorCtor = new (...args: unknown[]) => Error;
