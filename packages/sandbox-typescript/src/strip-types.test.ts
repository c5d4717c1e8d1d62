import { describe, expect, it } from "vitest";
import { stripTypes } from "./strip-types.js";

describe("stripTypes", () => {
  it("erases types in place: same length, every line and column kept", () => {
    const code = `const n: number = 41;
function f<T>(x: T, y?: string): T { return x; }
const v = f<number>(n)! as number satisfies number;`;
    const stripped = stripTypes(code);
    expect(stripped).toEqual({
      ok: true,
      code: `const n         = 41;
function f   (x   , y         )    { return x; }
const v = f        (n)                            ;`,
    });
    if (stripped.ok) expect(stripped.code.length).toBe(code.length);
  });

  it("keeps top-level return and await (the guest allows both)", () => {
    expect(stripTypes("const a: number = await 1;\nreturn a as number;")).toEqual({
      ok: true,
      code: "const a         = await 1;\nreturn a          ;",
    });
  });

  it("leaves plain JavaScript as it is", () => {
    expect(stripTypes("const a = 1;\na + 1")).toEqual({ ok: true, code: "const a = 1;\na + 1" });
  });

  it("resolves SANDBOX_SYNTAX_ERROR with the position of a parse error", () => {
    expect(stripTypes("const a: number = 1;\nconst b = ;")).toEqual({
      ok: false,
      result: {
        duration: 0,
        logs: [],
        success: false,
        errorCode: "SANDBOX_SYNTAX_ERROR",
        error: "SyntaxError: Expression expected (line 2, column 11) (SANDBOX_SYNTAX_ERROR)",
        guestError: { name: "SyntaxError", message: "Expression expected", stack: "", line: 2, column: 11 },
      },
    });
  });

  it("reports a parse error on line 1 of code with top-level return at its own column", () => {
    const stripped = stripTypes("const a = ;\nreturn 1");
    expect(stripped.ok ? undefined : stripped.result.guestError).toEqual({
      name: "SyntaxError",
      message: "Expression expected",
      stack: "",
      line: 1,
      column: 11,
    });
  });

  it.each([
    ["enum E { A }", "TypeScript enum is not supported", 1, 1],
    [
      "const x = 1;\nnamespace N { export const y = 1 }",
      "TypeScript namespace declaration is not supported",
      2,
      1,
    ],
    ["class C { constructor(public x: number) {} }", "TypeScript parameter property is not supported", 1, 30],
    [
      "const y = <number>x;",
      "The angle-bracket syntax for type assertions, `<T>expr`, is not supported. Instead, use the 'as' syntax: `expr as T`",
      1,
      11,
    ],
  ])("refuses what needs compiling, naming the construct: %s", (code, named, line, column) => {
    const stripped = stripTypes(code);
    const message = `${named}. TypeScript input only erases types (it does not compile), so constructs that would emit code (enum, namespace, parameter properties, <T>value assertions) are refused; rewrite it without them`;
    expect(stripped).toEqual({
      ok: false,
      result: {
        duration: 0,
        logs: [],
        success: false,
        errorCode: "SANDBOX_SYNTAX_ERROR",
        error: `SyntaxError: ${message} (line ${line}, column ${column}) (SANDBOX_SYNTAX_ERROR)`,
        guestError: { name: "SyntaxError", message, stack: "", line, column },
      },
    });
  });

  it("keeps `declare` and type-only imports as whitespace", () => {
    expect(stripTypes('import type { A } from "a";\ndeclare const b: A;\n1')).toEqual({
      ok: true,
      code: `${" ".repeat(27)}\n${" ".repeat(19)}\n1`,
    });
  });
});
