import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BUILTIN_RULE_NAMES } from "./analyze-program.js";
import { CodeTransformer } from "./code-transformer.js";

// Property tests: the transformer never crashes, judges the same code the same way every time
// (on the same instance, where the parse cache answers, and on a fresh one), and never rewrites.

/** JavaScript-shaped text: tokens the rules look at, glued with operators, brackets and quotes. */
const TOKENS = [
  "process",
  "require",
  "import",
  "(",
  ")",
  "eval",
  "Function",
  "globalThis",
  "this",
  "constructor",
  "__proto__",
  ".",
  "[",
  "]",
  "{",
  "}",
  "'",
  '"',
  "`",
  "${",
  "//",
  "/*",
  "*/",
  "\n",
  ";",
  "=",
  "=>",
  "const",
  "let",
  "x",
  "g",
  "while",
  "(true)",
  "for",
  "(;;)",
  "async",
  "await",
  "return",
  "new",
  "with",
  "\\u0070",
  "0",
  "+",
  "?.",
  "...",
  "#",
  "@",
  "class",
  "yield",
  "break",
  " ",
];
const jsLike = fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((parts) => parts.join(""));
const anyText = fc.oneof(
  jsLike,
  fc.string({ maxLength: 200 }),
  fc.string({ unit: "grapheme", maxLength: 60 }),
);

const RULES: readonly string[] = BUILTIN_RULE_NAMES;

describe("CodeTransformer (properties)", () => {
  it("never throws, never rewrites the code, and reports a known rule exactly when it blocks", () => {
    const transformer = new CodeTransformer();
    fc.assert(
      fc.property(anyText, (code) => {
        const result = transformer.transform(code);
        expect(result.code).toBe(code);
        // Every rule ran, unless the code does not parse (then only the length check did).
        expect(result.applied).toEqual(
          result.syntaxError === undefined ? transformer.ruleNames : ["max-code-length"],
        );
        if (result.blocked) {
          expect(RULES).toContain(result.blockedBy);
          expect(typeof result.reason).toBe("string");
        } else {
          expect(result.blockedBy).toBeUndefined();
        }
      }),
      { numRuns: 400 },
    );
  });

  it("the same verdict on a re-run and on a fresh instance", () => {
    const shared = new CodeTransformer();
    fc.assert(
      fc.property(anyText, (code) => {
        const first = shared.transform(code);
        expect(shared.transform(code)).toEqual(first);
        expect(new CodeTransformer().transform(code)).toEqual(first);
      }),
      { numRuns: 300 },
    );
  });

  it("code longer than maxCodeLength is blocked by max-code-length, whatever it contains", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), anyText, (max, code) => {
        fc.pre(code.length > max);
        const result = new CodeTransformer({ maxCodeLength: max }).transform(code);
        expect({ blocked: result.blocked, blockedBy: result.blockedBy }).toEqual({
          blocked: true,
          blockedBy: "max-code-length",
        });
      }),
      { numRuns: 200 },
    );
  });

  it("bad options are refused with SANDBOX_INVALID_CONFIG, never another exception", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), (maxCodeLength, builtins, rules) => {
        try {
          new CodeTransformer({ maxCodeLength, builtins, rules } as never);
        } catch (error) {
          expect((error as { code?: unknown }).code).toBe("SANDBOX_INVALID_CONFIG");
        }
      }),
      { numRuns: 300 },
    );
  });
});
