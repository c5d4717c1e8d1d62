import type { Intrinsics } from "./intrinsics.js";
import { BREAK_LENGTH, type Ctx, type List, MAX_STRING_LENGTH, MIN_LINE_LENGTH } from "./shared.js";
import type { Values } from "./values.js";

/**
 * GUEST REALM. Strings and primitives as Node prints them: escapes, quotes, key names, terminal
 * width.
 */
export function makeText(I: Intrinsics, V: Values) {
  const {
    StringCtor,
    charCodeAt,
    codePointAt,
    create,
    objectIs,
    stringIncludes,
    stringIndexOf,
    stringRepeat,
    stringSlice,
    symbolToString,
  } = I;
  const { hex, join, newList, push } = V;

  // ---- strings -----------------------------------------------------------
  /** Node's `meta` table: the escape of each code below 160 that needs one. */
  const META: List<string> = create(null);
  const HEX_DIGITS = "0123456789ABCDEF";
  for (let code = 0; code < 160; code++) {
    META[code] = `\\x${HEX_DIGITS[code >> 4]}${HEX_DIGITS[code & 15]}`;
  }
  META[8] = "\\b";
  META[9] = "\\t";
  META[10] = "\\n";
  META[12] = "\\f";
  META[13] = "\\r";
  META[39] = "\\'";
  META[92] = "\\\\";
  /** Escape control characters, the backslash, lone surrogates and (when `quote` is 39) single quotes. */
  const escapeText = (text: string, quote: number): string => {
    let result = "";
    let last = 0;
    for (let i = 0; i < text.length; i++) {
      const point = charCodeAt(text, i);
      if (point === quote || point === 92 || point < 32 || (point > 126 && point < 160)) {
        result += last === i ? META[point] : `${stringSlice(text, last, i)}${META[point]}`;
        last = i + 1;
      } else if (point >= 0xd800 && point <= 0xdfff) {
        if (point <= 0xdbff && i + 1 < text.length) {
          const next = charCodeAt(text, i + 1);
          if (next >= 0xdc00 && next <= 0xdfff) {
            i++;
            continue;
          }
        }
        result += `${stringSlice(text, last, i)}\\u${hex(point)}`;
        last = i + 1;
      }
    }
    if (last === 0) return text;
    if (last !== text.length) result += stringSlice(text, last);
    return result;
  };
  /** Node's `strEscape`: single quotes, or double quotes / backticks when the text holds single quotes. */
  const quoteString = (text: string): string => {
    let quote = 39;
    if (stringIncludes(text, "'")) {
      if (!stringIncludes(text, '"')) quote = -1;
      else if (!stringIncludes(text, "`") && !stringIncludes(text, "${")) quote = -2;
    }
    const escaped = escapeText(text, quote);
    if (quote === -1) return `"${escaped}"`;
    if (quote === -2) return `\`${escaped}\``;
    return `'${escaped}'`;
  };
  const isIdentifierKey = (key: string): boolean => {
    if (key.length === 0) return false;
    for (let i = 0; i < key.length; i++) {
      const code = charCodeAt(key, i);
      const letter = (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
      if (!letter && (i === 0 || code < 48 || code > 57)) return false;
    }
    return true;
  };

  const isZeroWidth = (code: number): boolean =>
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x300 && code <= 0x36f) ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x20d0 && code <= 0x20ff) ||
    (code >= 0xfe00 && code <= 0xfe0f) ||
    (code >= 0xfe20 && code <= 0xfe2f) ||
    (code >= 0xe0100 && code <= 0xe01ef);
  const isFullWidth = (code: number): boolean =>
    code >= 0x1100 &&
    (code <= 0x115f ||
      code === 0x2329 ||
      code === 0x232a ||
      (code >= 0x2e80 && code <= 0x3247 && code !== 0x303f) ||
      (code >= 0x3250 && code <= 0x4dbf) ||
      (code >= 0x4e00 && code <= 0xa4c6) ||
      (code >= 0xa960 && code <= 0xa97c) ||
      (code >= 0xac00 && code <= 0xd7a3) ||
      (code >= 0xf900 && code <= 0xfaff) ||
      (code >= 0xfe10 && code <= 0xfe19) ||
      (code >= 0xfe30 && code <= 0xfe6b) ||
      (code >= 0xff01 && code <= 0xff60) ||
      (code >= 0xffe0 && code <= 0xffe6) ||
      (code >= 0x1b000 && code <= 0x1b001) ||
      (code >= 0x1f200 && code <= 0x1f251) ||
      (code >= 0x1f300 && code <= 0x1f64f) ||
      (code >= 0x20000 && code <= 0x3fffd));
  /** Columns `text` takes on a terminal (ASCII exact; other text by an East Asian width table). */
  const stringWidth = (text: string): number => {
    let width = 0;
    for (let i = 0; i < text.length; i++) {
      const code = charCodeAt(text, i);
      if (code < 127) {
        width += code >= 32 ? 1 : 0;
        continue;
      }
      const point = codePointAt(text, i) as number;
      if (point > 0xffff) i++;
      width += isFullWidth(point) ? 2 : isZeroWidth(point) ? 0 : 1;
    }
    return width;
  };

  // ---- primitives --------------------------------------------------------
  const formatNumber = (value: number): string => (objectIs(value, -0) ? "-0" : `${value}`);
  const formatBigInt = (value: bigint): string => `${value}n`;
  const formatPrimitive = (value: unknown, ctx: Ctx): string => {
    if (typeof value === "string") {
      let text = value;
      let trailer = "";
      if (text.length > MAX_STRING_LENGTH) {
        const remaining = text.length - MAX_STRING_LENGTH;
        text = stringSlice(text, 0, MAX_STRING_LENGTH);
        trailer = `... ${remaining} more character${remaining > 1 ? "s" : ""}`;
      }
      if (text.length > MIN_LINE_LENGTH && text.length > BREAK_LENGTH - ctx.indentationLvl - 4) {
        const lines: List<string> = newList();
        let start = 0;
        for (;;) {
          const newline = stringIndexOf(text, "\n", start);
          if (newline === -1 || newline === text.length - 1) break;
          push(lines, quoteString(stringSlice(text, start, newline + 1)));
          start = newline + 1;
        }
        push(lines, quoteString(stringSlice(text, start)));
        return join(lines, ` +\n${stringRepeat(" ", ctx.indentationLvl + 2)}`) + trailer;
      }
      return quoteString(text) + trailer;
    }
    if (typeof value === "number") return formatNumber(value);
    if (typeof value === "bigint") return formatBigInt(value);
    if (typeof value === "symbol") return symbolToString(value);
    return StringCtor(value);
  };

  return {
    __proto__: null,
    formatBigInt,
    quoteString,
    stringWidth,
    formatNumber,
    escapeText,
    isIdentifierKey,
    formatPrimitive,
  };
}

export type Text = ReturnType<typeof makeText>;
