import { describe, expect, it } from "vitest";
import { SANDBOX_CODES, SandboxError } from "../error-codes/sandbox-codes.js";
import { BUILTIN_RULE_NAMES } from "./analyze-program.js";
import { CodeTransformer, DEFAULT_MAX_CODE_LENGTH, type TransformRule } from "./code-transformer.js";

const transformer = new CodeTransformer();

/** For each blocking rule: code it must block (evasions included) and code it must let through. */
const CASES: Record<string, { blocks: string[]; allows: string[] }> = {
  "block-process": {
    blocks: [
      "process.exit(1)",
      "const env = process.env",
      "globalThis.process.exit()",
      'globalThis["pro" + "cess"].exit()',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: guest source containing a template literal
      "globalThis[`pro${'cess'}`]",
      "const k = 'pro' + 'cess'; globalThis[k]",
      "globalThis[String.fromCharCode(112, 114, 111, 99, 101, 115, 115)]",
      "globalThis['ssecorp'.split('').reverse().join('')]",
      "globalThis[['pro', 'cess'].join('')]",
      "const g = globalThis; g.process",
      "let g; g = globalThis; g.process.exit()",
      "const { process: p } = globalThis",
      "const { globalThis: { process } } = globalThis",
      "window.self.global.process",
      "this.process",
      "(() => this.process)()",
      "globalThis?.process",
      "with (Math) { process }",
      "process = null",
      "Reflect.get(Object, 'process') && process",
    ],
    allows: [
      "obj.processed",
      "obj.process(1)",
      "const o = { process: 1 }; o.process",
      "// process.exit(1)\n1",
      "/* process */ 2",
      "'process.exit(1)'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: guest source containing a template literal
      "`process.exit(${1})`",
      "function run(process) { return process.exit }",
      "const process = { exit() {} }; process.exit()",
      "typeof process === 'undefined'",
      "class Job { process() { return 1 } }",
      "({ process() {} }).process()",
      "label: for (;;) { break label }",
    ],
  },
  "block-require": {
    blocks: [
      "require('fs')",
      "const r = require",
      "globalThis.require('child_process')",
      "globalThis['req' + 'uire']",
      "const g = self; g.require",
    ],
    allows: [
      "obj.require('x')",
      "'require(\"fs\")'",
      "const require = (x) => x; require('fs')",
      "typeof require",
    ],
  },
  "block-import-dynamic": {
    blocks: [
      "import('fs')",
      "const m = await import('node:' + 'fs')",
      "import fs from 'fs'",
      "export * from 'fs'",
    ],
    allows: ["'import(\"fs\")'", "obj.import('x')", "// import('fs')\n1", "const important = 1"],
  },
  "block-eval": {
    blocks: [
      "eval('1')",
      "(0, eval)('1')",
      "const e = eval; e('1')",
      "globalThis.eval('1')",
      "globalThis['ev' + 'al']('1')",
      "setTimeout('alert(1)', 10)",
      "setInterval(`tick()`, 10)",
      "globalThis.setTimeout('x' + y, 1)",
    ],
    allows: [
      "obj.eval('1')",
      "'eval(1)'",
      "const evaluation = 1",
      "setTimeout(() => 1, 10)",
      "function f(eval2) { return eval2 }",
    ],
  },
  "block-function-constructor": {
    blocks: [
      "Function('return this')()",
      "new Function('a', 'return a')",
      "const F = Function; new F('x')",
      "globalThis.Function('x')",
      "Reflect.construct(Function, ['x'])",
      "Function.call(null, 'x')",
      "globalThis['Func' + 'tion']",
    ],
    allows: [
      "Function.prototype.toString.call(f)",
      "Function.length",
      "function Function2() {}",
      "'new Function()'",
      "x instanceof Object",
    ],
  },
  "block-global-this": {
    blocks: [
      "globalThis[name]",
      "const g = globalThis; g[key]",
      "Reflect.get(globalThis, 'x')",
      "Object.getOwnPropertyDescriptor(globalThis, key)",
      "const { ...everything } = globalThis",
      "(function () { return this })().x",
      "f(globalThis)",
      "[globalThis]",
      "({ g: globalThis })",
      "with (globalThis) { x }",
      "const { [key]: v } = globalThis",
    ],
    allows: [
      "globalThis.counter = 1",
      "globalThis.counter + 1",
      "const g = globalThis; g.answer = 42",
      "typeof globalThis",
      "'globalThis[x]'",
      "obj.globalThis",
      "'use strict'; (function () { return this })()",
      "class A { m() { return this } }",
      "({ m() { return this } })",
      "function Point() { this.x = 1 }",
    ],
  },
  "block-proto-access": {
    blocks: [
      "a.__proto__",
      "a['__pro' + 'to__'] = b",
      "const { __proto__: p } = a",
      "({ __proto__: evil })",
      "Object.setPrototypeOf(a, b)",
      "Reflect.setPrototypeOf(a, b)",
      "a.__lookupGetter__('x')",
      "Reflect.get(a, '__proto__')",
    ],
    allows: [
      "({ __proto__: null })",
      "'__proto__'",
      "Object.getPrototypeOf(a)",
      "obj.proto",
      "// a.__proto__\n1",
    ],
  },
  "block-constructor-access": {
    blocks: [
      "x.constructor",
      "x['constructor']",
      "x['con' + 'structor']",
      "({}).constructor.constructor('return process')()",
      "(async () => {}).constructor",
      "const { constructor: C } = x",
      "Reflect.get(x, 'constructor')",
      "x?.constructor",
    ],
    allows: [
      "class A { constructor() { this.a = 1 } }",
      "({ constructor: 1 })",
      "'constructor' in x",
      "'x.constructor'",
      "x.constructorName",
    ],
  },
};

describe("CodeTransformer", () => {
  it("blocks process.exit via block-process rule", () => {
    const result = transformer.transform("process.exit(1)");
    expect(result).toEqual({
      code: "process.exit(1)",
      blocked: true,
      blockedBy: "block-process",
      reason: "access to `process` (line 1)",
      applied: [...BUILTIN_RULE_NAMES],
      warnings: [],
    });
  });

  it("blocks oversize code", () => {
    const small = new CodeTransformer({ maxCodeLength: 10 });
    const code = "x".repeat(11);
    expect(small.transform(code)).toEqual({
      code,
      blocked: true,
      blockedBy: "max-code-length",
      reason: "code is 11 characters, over the limit of 10",
      applied: ["max-code-length"],
      warnings: [],
    });
    expect(small.transform("x".repeat(10)).blocked).toBe(false);
    const atDefault = "1;".repeat(DEFAULT_MAX_CODE_LENGTH / 2) + "x";
    expect(transformer.transform(atDefault).blockedBy).toBe("max-code-length");
  });

  for (const [rule, { blocks, allows }] of Object.entries(CASES)) {
    it(`${rule}: catches direct, computed and aliased forms`, () => {
      const blockedBy = blocks.map((code) => [code, transformer.transform(code).blockedBy]);
      expect(blockedBy).toEqual(blocks.map((code) => [code, rule]));
    });

    it(`${rule}: no false positives on comments, strings, templates, property names and locals`, () => {
      const outcomes = allows.map((code) => {
        const result = transformer.transform(code);
        return [code, result.blocked, result.syntaxError?.message];
      });
      expect(outcomes).toEqual(allows.map((code) => [code, false, undefined]));
    });
  }

  it("warn-while-true: warns on constant-true loops without an exit, never blocks", () => {
    const warned = [
      "while (true) {}",
      "while (1) { x++ }",
      "do { x++ } while (!0)",
      "while ('yes') { for (;;) { break } }",
    ];
    for (const code of warned) {
      const result = transformer.transform(code);
      expect({
        code,
        blocked: result.blocked,
        warnings: result.warnings.map((w) => w.split(":")[0]),
      }).toEqual({
        code,
        blocked: false,
        warnings: ["warn-while-true"],
      });
    }
    for (const code of [
      "while (true) { if (done) break }",
      "outer: while (true) { for (;;) { break outer } }",
      "function f() { while (true) { return 1 } }",
      "while (true) { throw new Error('x') }",
      "while (x) {}",
      "'while (true) {}'",
    ]) {
      expect({ code, warnings: transformer.transform(code).warnings }).toEqual({ code, warnings: [] });
    }
    expect(transformer.transform("1;\nwhile (true) {}").warnings).toEqual([
      "warn-while-true: `while` loop with a constant true condition and no exit (line 2)",
    ]);
  });

  it("warn-infinite-for: warns on condition-less for loops without an exit, never blocks", () => {
    expect(transformer.transform("for (;;) {}").warnings).toEqual([
      "warn-infinite-for: `for` loop without a condition or exit (line 1)",
    ]);
    expect(transformer.transform("for (let i = 0; true; i++) { i }").warnings).toHaveLength(1);
    for (const code of [
      "for (;;) { if (x) break }",
      "for (let i = 0; i < 3; i++) {}",
      "for (const k in o) {}",
    ]) {
      expect({ code, warnings: transformer.transform(code).warnings }).toEqual({ code, warnings: [] });
    }
  });

  it("reports unparsable code as a syntax error with its message and line, not as a block", () => {
    expect(transformer.transform("const a = 1;\nconst = 2;")).toEqual({
      code: "const a = 1;\nconst = 2;",
      blocked: false,
      applied: ["max-code-length"],
      warnings: [],
      syntaxError: { message: "SyntaxError: Unexpected token (line 2)", line: 2, column: 6 },
      // Handed down to the engine, which then compiles the code without parsing it again.
      prepared: {
        code: "const a = 1;\nconst = 2;",
        source: "const a = 1;\nconst = 2;",
        async: false,
        syntaxError: { message: "SyntaxError: Unexpected token (line 2)", line: 2, column: 6 },
      },
    });
  });

  it("parses top-level await and return as a script, and falls back to a module", () => {
    expect(transformer.transform("await Promise.resolve(1); return 2").blocked).toBe(false);
    expect(transformer.transform("export const x = 1;").blocked).toBe(false);
  });

  it("wouldBlock is a pure check", () => {
    const fresh = new CodeTransformer();
    expect(fresh.wouldBlock("eval('1')")).toBe(true);
    expect(fresh.wouldBlock("1 + 1")).toBe(false);
    expect(fresh.wouldBlock("eval('1')")).toBe(true);
    expect(fresh.ruleNames).toEqual([...BUILTIN_RULE_NAMES]);
  });

  it("custom rules are additive: run after the built-ins, block or warn, and cannot replace one", () => {
    const noFetch: TransformRule = {
      name: "block-fetch",
      severity: "block",
      description: "Blocks calls to fetch.",
      check: ({ code }) => {
        const at = code.indexOf("fetch(");
        return at === -1 ? [] : [{ message: "call to `fetch`", start: at }];
      },
    };
    const longLines: TransformRule = {
      name: "warn-long-line",
      severity: "warn",
      description: "Warns about long lines.",
      check: ({ code }) =>
        code.split("\n").some((line) => line.length > 20) ? [{ message: "long line", start: 0 }] : [],
    };
    const custom = new CodeTransformer({ rules: [noFetch] }).addRule(longLines);
    expect(custom.ruleNames).toEqual([...BUILTIN_RULE_NAMES, "block-fetch", "warn-long-line"]);
    const result = custom.transform("const veryLongVariableName = 1;\nfetch('x')");
    expect({ blockedBy: result.blockedBy, reason: result.reason, warnings: result.warnings }).toEqual({
      blockedBy: "block-fetch",
      reason: "call to `fetch` (line 2)",
      warnings: ["warn-long-line: long line (line 1)"],
    });
    // Built-ins still win when both match: order is built-ins first.
    expect(custom.transform("fetch(process.env.URL)").blockedBy).toBe("block-process");
    expect(() => custom.addRule({ ...noFetch })).toThrow(SandboxError);
    expect(() => custom.addRule({ ...noFetch, name: "block-eval" })).toThrow(
      'CodeTransformer rule "block-eval" is already registered; rules are additive and cannot be replaced (SANDBOX_INVALID_CONFIG)',
    );
  });

  it("a custom rule that throws fails closed", () => {
    const broken = new CodeTransformer({
      rules: [
        {
          name: "block-broken",
          severity: "block",
          description: "Always throws.",
          check: () => {
            throw new Error("bug in rule");
          },
        },
      ],
    });
    expect(broken.transform("1").reason).toBe("rule failed: bug in rule (line 1)");
  });

  it("can apply a subset of the built-ins (engines use block-import-dynamic alone)", () => {
    const imports = new CodeTransformer({ builtins: ["block-import-dynamic"] });
    expect(imports.ruleNames).toEqual(["max-code-length", "block-import-dynamic"]);
    expect(imports.transform("process.exit()").blocked).toBe(false);
    expect(imports.transform("import('fs')").blockedBy).toBe("block-import-dynamic");
  });

  it("rejects bad options with SANDBOX_INVALID_CONFIG", () => {
    const codeOf = (make: () => unknown): string | undefined => {
      try {
        make();
      } catch (error) {
        return error instanceof SandboxError ? error.code : "other";
      }
      return undefined;
    };
    expect(codeOf(() => new CodeTransformer({ maxCodeLength: 0 }))).toBe(SANDBOX_CODES.INVALID_CONFIG);
    expect(codeOf(() => new CodeTransformer({ builtins: ["block-nothing" as never] }))).toBe(
      SANDBOX_CODES.INVALID_CONFIG,
    );
    expect(
      codeOf(
        () =>
          new CodeTransformer({
            rules: [{ name: "Bad Name", severity: "block", description: "", check: () => [] }],
          }),
      ),
    ).toBe(SANDBOX_CODES.INVALID_CONFIG);
  });
});
