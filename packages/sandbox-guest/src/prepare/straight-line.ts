import { LruCache, type PreparedGuestCode, parseGuestCode } from "@suaveplan/sandbox-core/code-transformer";

/** Longest source worth proving straight-line (longer code always runs under the watchdog). */
const MAX_PROVABLE_LENGTH = 2_000;

/**
 * Node types of pure expressions over literals and globals: no calls,
 * `new`, loops, functions, classes, getters, spreads, declarations or
 * assignments (which could grow strings and arrays geometrically), regex or
 * BigInt literals. Evaluating such a program takes time and memory linear in
 * its size (times the size of the data the host copied in) and never runs
 * user-defined code.
 */
const STRAIGHT_LINE_TYPES: ReadonlySet<string> = new Set([
  "Program",
  "ExpressionStatement",
  "EmptyStatement",
  "Literal",
  "Identifier",
  "ThisExpression",
  "BinaryExpression",
  "LogicalExpression",
  "UnaryExpression",
  "ConditionalExpression",
  "SequenceExpression",
  "ArrayExpression",
  "ObjectExpression",
  "Property",
  "MemberExpression",
  "ChainExpression",
  "TemplateLiteral",
  "TemplateElement",
]);

interface LooseNode {
  type: string;
  [key: string]: unknown;
}

function isNode(value: unknown): value is LooseNode {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

function straight(node: LooseNode): boolean {
  if (!STRAIGHT_LINE_TYPES.has(node.type)) return false;
  if (node.type === "Literal" && (node.regex !== undefined || node.bigint !== undefined)) return false;
  if (node.type === "Property" && (node.kind !== "init" || node.method === true)) return false;
  if (node.type === "UnaryExpression" && node.operator === "delete") return false;
  for (const key of Object.keys(node)) {
    const value = node[key];
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && (!isNode(item) || !straight(item))) return false;
    } else if (isNode(value) && !straight(value)) {
      return false;
    }
  }
  return true;
}

/**
 * True when `code` is a provably bounded pure expression (see
 * {@link STRAIGHT_LINE_TYPES}), e.g. `2 + 3` or `a * b`, so it can
 * run without node's per-call timeout watchdog (a thread started and joined
 * for every `runInContext` with `timeout`, the largest fixed cost of a small
 * execution). Anything not proven runs under the watchdog. Only valid when
 * no source module (whose functions a getter could reach) is registered.
 * `program`: `code` already parsed as a script, so it is not parsed again.
 */
export function isStraightLine(code: string, program?: PreparedGuestCode["program"]): boolean {
  // Calls, loops and functions all need a parenthesis: skip the parse for them.
  if (code.length > MAX_PROVABLE_LENGTH || code.includes("(")) return false;
  // The execution's own parse of this code, when it was parsed (as a script) already.
  if (program !== undefined) return straight(program as unknown as LooseNode);
  const known = proven.get(code);
  if (known !== undefined) return known;
  const parsed = parseGuestCode(code);
  const result =
    parsed.ok && parsed.sourceType === "script" && straight(parsed.program as unknown as LooseNode);
  proven.set(code, result);
  return result;
}

/** What was proven, by code text (short code only, see {@link MAX_PROVABLE_LENGTH}). */
const proven = new LruCache<string, boolean>(128);
