import { type Node, type Program, parse } from "acorn";
import { simple } from "acorn-walk";

/** Source ready for an engine to evaluate as a classic script. */
export interface GuestScript {
  /** The source to evaluate; its completion value is the result (a promise when `async`). */
  source: string;
  /** True when the snippet used top-level `await` (or `return`) and was wrapped in an async function. */
  async: boolean;
}

interface PositionedNode extends Node {
  type: string;
  start: number;
  end: number;
}

interface ExpressionStatementNode extends PositionedNode {
  expression: PositionedNode;
}

/**
 * Prepare a snippet for every engine alike. Plain scripts pass through
 * unchanged, so `2 + 3` completes with `5`. A snippet using top-level `await`
 * or `return` (AI-written code does, constantly) is wrapped in an async arrow
 * whose last expression statement becomes the return value; the wrapper opens
 * on the first line so line numbers in errors stay the same. Code that does
 * not parse is returned unchanged so the engine reports its own SyntaxError.
 * Prefer `prepareGuestCode`, which shares its parse with the CodeTransformer.
 */
export function toGuestScript(code: string): GuestScript {
  let program: PositionedNode & { body: PositionedNode[] };
  try {
    program = parse(code, {
      ecmaVersion: "latest",
      sourceType: "script",
      allowAwaitOutsideFunction: true,
      allowReturnOutsideFunction: true,
      allowHashBang: true,
    }) as unknown as PositionedNode & { body: PositionedNode[] };
  } catch {
    return { source: code, async: false };
  }
  const source = wrapTopLevelAwait(code, program as never);
  return source === undefined ? { source: code, async: false } : { source, async: true };
}

/** How the async wrapper moved positions, so errors can point at the original code. */
export interface WrapShift {
  /** Characters the wrapper adds before the code on line 1. */
  prefix: number;
  /** 1-based line (in the wrapped source) where `return (` was inserted; 0 when none. */
  line: number;
  /** 0-based column (in the wrapped source) where it starts. */
  column: number;
  /** Its length. */
  length: number;
}

/** The wrapper's opening, on line 1 so line numbers stay the same. */
const WRAP_OPEN = "(async () => {";
const RETURN_OPEN = "return (";

/** The async-arrow form of `code` when its parsed script uses top-level `await`/`return`, else undefined. */
export function wrapTopLevelAwait(code: string, parsed: Program): string | undefined {
  return wrapWithShift(code, parsed)?.source;
}

/** {@link wrapTopLevelAwait} with how positions moved. */
export function wrapWithShift(
  code: string,
  parsed: Program,
): { source: string; shift: WrapShift } | undefined {
  const program = parsed as unknown as PositionedNode & { body: PositionedNode[] };
  if (!usesTopLevelAwaitOrReturn(program)) return undefined;
  const last = program.body.at(-1);
  let body = code;
  const shift: WrapShift = { prefix: WRAP_OPEN.length, line: 0, column: 0, length: RETURN_OPEN.length };
  if (last?.type === "ExpressionStatement") {
    const expression = (last as ExpressionStatementNode).expression;
    body = `${code.slice(0, last.start)}${RETURN_OPEN}${code.slice(expression.start, expression.end)});${code.slice(last.end)}`;
    const before = code.slice(0, last.start);
    const lineStart = before.lastIndexOf("\n") + 1;
    shift.line = before.split("\n").length;
    shift.column = last.start - lineStart + (shift.line === 1 ? WRAP_OPEN.length : 0);
  }
  return { source: `${WRAP_OPEN}${body}\n})()`, shift };
}

function usesTopLevelAwaitOrReturn(program: PositionedNode): boolean {
  let found = false;
  const functions: Array<[number, number]> = [];
  const collect = (node: PositionedNode) => {
    functions.push([node.start, node.end]);
  };
  simple(program, {
    FunctionDeclaration: collect,
    FunctionExpression: collect,
    ArrowFunctionExpression: collect,
  });
  const insideFunction = (node: PositionedNode) =>
    functions.some(([s, e]) => node.start > s && node.end <= e);
  const check = (node: PositionedNode) => {
    if (!found && !insideFunction(node)) found = true;
  };
  simple(program, {
    AwaitExpression: check,
    ReturnStatement: check,
    ForOfStatement: (node) => {
      if ((node as PositionedNode & { await?: boolean }).await) check(node as PositionedNode);
    },
  });
  return found;
}
