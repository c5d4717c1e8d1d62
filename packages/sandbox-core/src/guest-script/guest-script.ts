import { type Node, parse } from "acorn";
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
  if (!usesTopLevelAwaitOrReturn(program)) return { source: code, async: false };
  const last = program.body.at(-1);
  let body = code;
  if (last?.type === "ExpressionStatement") {
    const expression = (last as ExpressionStatementNode).expression;
    body = `${code.slice(0, last.start)}return (${code.slice(expression.start, expression.end)});${code.slice(last.end)}`;
  }
  return { source: `(async () => {${body}\n})()`, async: true };
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
