/** The types and limits every file of inspect/ shares (types are erased; the limits are numbers). */

export type Uncurried<A extends unknown[], R> = (self: unknown, ...args: A) => R;
export type AnyFunction = (...args: never[]) => unknown;
export interface List<T> {
  length: number;
  [index: number]: T;
}
export interface Entry {
  key: string | symbol;
  desc: PropertyDescriptor;
}
export interface Boxed {
  type: string;
  primitive: unknown;
}
export interface Ctx {
  depth: number;
  indentationLvl: number;
  currentDepth: number;
  seen: List<object>;
  circular: Map<object, number> | undefined;
  budget: List<number>;
  /** Characters of properties and items written so far, every level counted (an overcount). */
  written: number;
  /** Past this many, objects and arrays stop listing entries (`... n more`). */
  maxChars: number;
}
export interface JsonFrame {
  object: object;
  isArray: boolean;
  keys: List<Entry>;
  count: number;
  index: number;
  text: string;
  items: number;
  prefix: string;
}

export const DEFAULT_DEPTH = 2;
export const MAX_ARRAY_LENGTH = 100;
export const MAX_STRING_LENGTH = 10000;
export const BREAK_LENGTH = 80;
export const COMPACT = 3;
export const MIN_LINE_LENGTH = 16;
export const MAX_PROTOTYPE_CHAIN = 256;
export const MAX_KEYED_ELEMENTS = 10000;
export const PLACEHOLDER = "[object could not be formatted]";
export const kObjectType = 0;
export const kArrayType = 1;
export const kArrayExtrasType = 2;
