import type { Program } from "acorn";
import { SANDBOX_CODES, SandboxError } from "../error-codes/sandbox-codes.js";
import { type AnalysisFinding, BUILTIN_RULE_NAMES, type BuiltinRuleName } from "./analyze-program.js";
import { type GuestSyntaxError, lineOf } from "./parse-guest-code.js";
import { type PreparedGuestCode, prepareGuestCode } from "./prepare-guest-code.js";

/** Default for {@link CodeTransformerOptions.maxCodeLength}, in UTF-16 code units. */
export const DEFAULT_MAX_CODE_LENGTH = 100_000;

/** What a rule gets to look at. */
export interface RuleInput {
  /** The source as given. */
  readonly code: string;
  /** The parsed program (ESTree, from acorn). */
  readonly program: Program;
  /** How it parsed: as a script, or only as a module. */
  readonly sourceType: "script" | "module";
  /** Everything the built-in scope-aware analysis found, for rules that refine it. */
  readonly findings: readonly AnalysisFinding[];
}

/** One thing a rule objects to. */
export interface RuleFinding {
  /** What was found, e.g. "access to `process`". */
  message: string;
  /** Character offset in the source (used to report the line). */
  start: number;
}

/** A check run on parsed code. Built-in and custom rules share this shape. */
export interface TransformRule {
  /** Unique name, reported as `blockedBy` (kebab-case, e.g. `block-fetch`). */
  readonly name: string;
  /** `block` refuses the code; `warn` only adds a warning. */
  readonly severity: "block" | "warn";
  /** One sentence saying what the rule catches. */
  readonly description: string;
  /** The findings for this code; an empty array when the rule does not apply. */
  check(input: RuleInput): readonly RuleFinding[];
}

/** Options of {@link CodeTransformer}. */
export interface CodeTransformerOptions {
  /** Longest accepted source, in UTF-16 code units; longer code is blocked by `max-code-length`. Default 100 000. */
  maxCodeLength?: number;
  /** Which built-in rules to apply (default: all eleven). `max-code-length` always applies. */
  builtins?: readonly BuiltinRuleName[];
  /** Custom rules, checked after the built-ins (additive; names must be unique). */
  rules?: readonly TransformRule[];
}

/** The outcome of {@link CodeTransformer.transform}. */
export interface TransformResult {
  /** The code to run: the input, unchanged (rules check; they do not rewrite). */
  code: string;
  /** True when a `block` rule matched (or the code is too long). */
  blocked: boolean;
  /** The first blocking rule, e.g. `block-process`. */
  blockedBy?: string;
  /** Why it was blocked, with the line, e.g. "access to `process` (line 1)". */
  reason?: string;
  /** Names of the rules that ran, in order. */
  applied: string[];
  /** `warn` findings, e.g. "warn-while-true: `while` loop … (line 3)". */
  warnings: string[];
  /** Set (and `blocked` false) when the code does not parse. */
  syntaxError?: GuestSyntaxError;
  /** The code parsed and analysed, unless it was blocked: hand it to the engine with `withPreparedCode`. */
  prepared?: PreparedGuestCode;
}

const BUILTIN_DESCRIPTIONS: Record<Exclude<BuiltinRuleName, "max-code-length">, string> = {
  "block-process": "Blocks any reference to the global `process`, direct, aliased or computed.",
  "block-require": "Blocks any reference to the global `require`.",
  "block-import-dynamic": "Blocks `import()`, `import` declarations and `export … from`.",
  "block-eval": "Blocks `eval` (direct, indirect, aliased) and string callbacks to setTimeout/setInterval.",
  "block-function-constructor": "Blocks calling, constructing or aliasing the `Function` constructor.",
  "block-global-this":
    "Blocks uses of the global object the analysis cannot follow: dynamic keys, rest destructuring, or passing it on as a value.",
  "block-proto-access": "Blocks `__proto__`, the legacy accessor methods and `setPrototypeOf`.",
  "block-constructor-access":
    "Blocks reading `.constructor` (the classic route to the Function constructor).",
  "warn-while-true": "Warns about `while`/`do…while` loops with a constant true condition and no exit.",
  "warn-infinite-for": "Warns about `for` loops without a condition (or a constant true one) and no exit.",
};

function builtinRule(name: Exclude<BuiltinRuleName, "max-code-length">): TransformRule {
  return Object.freeze({
    name,
    severity: name.startsWith("warn-") ? "warn" : "block",
    description: BUILTIN_DESCRIPTIONS[name],
    check: (input: RuleInput) => input.findings.filter((finding) => finding.rule === name),
  });
}

const RULE_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/** An option value as error text, calling nothing on it (a hostile `toString` must not turn a coded error into a raw one). */
function describeOption(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "an array" : "an object";
  return typeof value === "function" || typeof value === "symbol" ? `a ${typeof value}` : String(value);
}

/**
 * Static checks on guest code before an engine runs it, built on a real
 * parser (acorn) with scope-aware analysis: it never trips on comments,
 * strings, template text or property names (`obj.processed`), and it still
 * catches computed and aliased access (`globalThis["pro" + "cess"]`,
 * `const g = globalThis; g.process`, `x["constructor"]`).
 *
 * Defence in depth, NOT a security boundary: JavaScript is too dynamic for
 * any static check to be complete (e.g. `obj[key]` with a key computed at
 * run time). The engine's isolation is what protects the host.
 *
 * @example
 * const transformer = new CodeTransformer();
 * transformer.transform("process.exit(1)").blockedBy; // "block-process"
 */
export class CodeTransformer {
  private readonly maxCodeLength: number;
  private readonly rules: TransformRule[];

  constructor(options: CodeTransformerOptions = {}) {
    const maxCodeLength = options.maxCodeLength ?? DEFAULT_MAX_CODE_LENGTH;
    if (!Number.isInteger(maxCodeLength) || maxCodeLength <= 0) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `CodeTransformer maxCodeLength must be a positive integer (got ${describeOption(maxCodeLength)})`,
      );
    }
    this.maxCodeLength = maxCodeLength;
    const builtins = options.builtins ?? BUILTIN_RULE_NAMES;
    if (!Array.isArray(builtins)) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `CodeTransformer builtins must be an array of rule names (got ${describeOption(builtins)})`,
      );
    }
    for (const name of builtins) {
      if (!(BUILTIN_RULE_NAMES as readonly string[]).includes(name)) {
        throw new SandboxError(
          SANDBOX_CODES.INVALID_CONFIG,
          `CodeTransformer builtins: unknown rule ${describeOption(name)}; expected one of ${BUILTIN_RULE_NAMES.join(", ")}`,
        );
      }
    }
    this.rules = BUILTIN_RULE_NAMES.filter(
      (name): name is Exclude<BuiltinRuleName, "max-code-length"> =>
        name !== "max-code-length" && builtins.includes(name),
    ).map(builtinRule);
    const rules = options.rules ?? [];
    if (!Array.isArray(rules)) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `CodeTransformer rules must be an array of rules (got ${describeOption(rules)})`,
      );
    }
    for (const rule of rules) this.addRule(rule);
  }

  /** Names of every rule applied, in order (`max-code-length` first). */
  get ruleNames(): string[] {
    return ["max-code-length", ...this.rules.map((rule) => rule.name)];
  }

  /**
   * Add a custom rule, checked after the existing ones. Throws
   * `SANDBOX_INVALID_CONFIG` when the name is taken or the rule is malformed.
   */
  addRule(rule: TransformRule): this {
    const name = (rule as Partial<TransformRule> | undefined)?.name;
    if (typeof name !== "string" || !RULE_NAME.test(name)) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `CodeTransformer rule name must be kebab-case (got ${describeOption(name)})`,
      );
    }
    if (this.ruleNames.includes(name)) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `CodeTransformer rule "${name}" is already registered; rules are additive and cannot be replaced`,
      );
    }
    if ((rule.severity !== "block" && rule.severity !== "warn") || typeof rule.check !== "function") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `CodeTransformer rule "${name}" needs severity "block" or "warn" and a check(input) function`,
      );
    }
    this.rules.push(rule);
    return this;
  }

  /**
   * Check `code`. Oversize code is blocked by `max-code-length` before
   * parsing; unparsable code comes back with `syntaxError` (not blocked);
   * otherwise every rule runs and the first blocking finding wins.
   */
  transform(code: string): TransformResult {
    const applied = ["max-code-length"];
    if (code.length > this.maxCodeLength) {
      return {
        code,
        blocked: true,
        blockedBy: "max-code-length",
        reason: `code is ${code.length} characters, over the limit of ${this.maxCodeLength}`,
        applied,
        warnings: [],
      };
    }
    const prepared = prepareGuestCode(code, { analyse: true });
    if (prepared.syntaxError !== undefined) {
      return { code, blocked: false, applied, warnings: [], syntaxError: prepared.syntaxError, prepared };
    }
    const input: RuleInput = {
      code,
      program: prepared.program as Program,
      sourceType: prepared.sourceType ?? "script",
      findings: prepared.findings ?? [],
    };
    const warnings: string[] = [];
    let blockedBy: string | undefined;
    let reason: string | undefined;
    for (const rule of this.rules) {
      applied.push(rule.name);
      let findings: readonly RuleFinding[];
      try {
        findings = rule.check(input);
      } catch (error) {
        // A broken rule fails closed.
        findings = [
          { message: `rule failed: ${error instanceof Error ? error.message : String(error)}`, start: 0 },
        ];
      }
      if (findings.length === 0) continue;
      if (rule.severity === "warn") {
        for (const finding of findings) warnings.push(`${rule.name}: ${describe(code, finding)}`);
      } else if (blockedBy === undefined) {
        blockedBy = rule.name;
        reason = describe(code, findings[0] as RuleFinding);
      }
    }
    const result: TransformResult = { code, blocked: blockedBy !== undefined, applied, warnings };
    if (blockedBy === undefined) result.prepared = prepared;
    if (blockedBy !== undefined) result.blockedBy = blockedBy;
    if (reason !== undefined) result.reason = reason;
    return result;
  }

  /** True when {@link transform} would block `code`. Pure: no state changes, no telemetry. */
  wouldBlock(code: string): boolean {
    return this.transform(code).blocked;
  }
}

function describe(code: string, finding: RuleFinding): string {
  return `${finding.message} (line ${lineOf(code, finding.start)})`;
}
