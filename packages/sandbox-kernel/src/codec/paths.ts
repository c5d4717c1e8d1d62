import type { Intrinsics } from "./intrinsics.js";
import type { Kinds } from "./kinds.js";

/**
 * GUEST REALM. How a refusal's `path` names each step (`.name`, `["a b"]`, `.get(1)`,
 * `.values()[i]`), and JSON string literals for names and messages.
 */
export function makePaths(I: Intrinsics, K: Kinds) {
  const { StringCtor, jsonStringify } = I;
  const { NEEDS_ESCAPE, charCodeAt, regExpExec } = K;

  /** `s` as a JSON string literal; text with nothing to escape skips `JSON.stringify`. */
  const quote = (s: string): string => (regExpExec(NEEDS_ESCAPE, s) === null ? `"${s}"` : jsonStringify(s));

  /** A non-string name or message as text, without running any code of the value's author. */
  const text = (v: unknown): string =>
    v === undefined || (typeof v === "object" && v !== null) || typeof v === "function" ? "" : StringCtor(v);

  const isIdentifier = (key: string): boolean => {
    if (key.length === 0) return false;
    for (let i = 0; i < key.length; i++) {
      const c = charCodeAt(key, i);
      const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95;
      if (!letter && (i === 0 || c < 48 || c > 57)) return false;
    }
    return true;
  };
  const propertySegment = (key: string): string =>
    isIdentifier(key) ? `.${key}` : `[${jsonStringify(key)}]`;
  const mapValueSegment = (key: unknown, index: number): string => {
    let literal: string | undefined;
    switch (typeof key) {
      case "string":
        literal = jsonStringify(key);
        break;
      case "number":
        literal = key === 0 && 1 / key < 0 ? "-0" : `${key}`;
        break;
      case "bigint":
        literal = `${key}n`;
        break;
      case "boolean":
      case "undefined":
        literal = `${key}`;
        break;
      default:
        if (key === null) literal = "null";
    }
    return literal !== undefined && literal.length <= 40 ? `.get(${literal})` : `.values()[${index}]`;
  };

  return { __proto__: null, mapValueSegment, propertySegment, quote, text };
}

export type Paths = ReturnType<typeof makePaths>;
