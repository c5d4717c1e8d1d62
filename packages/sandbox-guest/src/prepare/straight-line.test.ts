import { describe, expect, it } from "vitest";
import { isStraightLine } from "./straight-line.js";

describe("isStraightLine", () => {
  it("accepts pure expressions over literals and globals", () => {
    for (const code of [
      "2 + 3",
      "a * b",
      "'x' + 1",
      "[1, { a: true }, null]",
      "ok ? 1 : 2",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: guest source containing a template literal
      "`n=${n}`",
      "x?.y.z",
      "typeof x; 1",
    ]) {
      expect({ code, straight: isStraightLine(code) }).toEqual({ code, straight: true });
    }
  });

  it("refuses anything that can loop, call, define functions or grow data geometrically", () => {
    for (const code of [
      "f()",
      "(2 + 3) * 4",
      "new Array",
      "tag`x`",
      "x => x",
      "while (1) {}",
      "for (;;) {}",
      "do {} while (1)",
      "a = 1",
      "a += a",
      "a++",
      "var a = 1",
      "({ get x() { return 1 } })",
      "({ m() {} })",
      "[...a]",
      "({ ...a })",
      "delete a.b",
      "/a+/",
      "2n ** 9n",
      "class A {}",
      "if (a) b",
      "export const x = 1",
      "x".repeat(2_001),
    ]) {
      expect({ code: code.slice(0, 30), straight: isStraightLine(code) }).toEqual({
        code: code.slice(0, 30),
        straight: false,
      });
    }
  });
});
