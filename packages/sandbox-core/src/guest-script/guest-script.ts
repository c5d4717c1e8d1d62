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

/**
 * How the async wrapper moved positions, so errors can point at the original
 * code. Every insertion is `[line, column, length]` in the wrapped source
 * (1-based line, 0-based column), sorted by line then column; the wrapper's
 * opening is the first, on line 1. Insertions add no line breaks, so lines
 * are the same as in the code.
 */
export interface WrapShift {
  insertions: Array<[line: number, column: number, length: number]>;
}

/** The wrapper's opening, on line 1 so line numbers stay the same. */
const WRAP_OPEN = "(async () => {";
/** Holds the completion value; no guest code can name it by accident (see {@link completionName}). */
const COMPLETION = "$sandbox$completion";

/** The async-arrow form of `code` when its parsed script uses top-level `await`/`return`, else undefined. */
export function wrapTopLevelAwait(code: string, parsed: Program): string | undefined {
  return wrapWithShift(code, parsed)?.source;
}

/**
 * {@link wrapTopLevelAwait} with how positions moved. The arrow returns the
 * script's completion value, the one the same code has without `await`
 * (ECMAScript completion records): every top-level statement that produces a
 * value stores it in one variable, statements that reset it to `undefined`
 * (`if`, `switch`, loops, `try`, `with`) do so first, a `catch` starts afresh
 * and a `finally` that completes normally leaves it as it was. Functions and
 * classes are not entered. A top-level `return x` still returns `x`.
 */
export function wrapWithShift(
  code: string,
  parsed: Program,
): { source: string; shift: WrapShift } | undefined {
  const program = parsed as unknown as PositionedNode & { body: PositionedNode[] };
  if (!usesTopLevelAwaitOrReturn(program)) return undefined;
  const name = completionName(code);
  const edits = completionEdits(program.body, name);
  let body = "";
  let from = 0;
  for (const edit of edits) {
    body += code.slice(from, edit.at) + edit.text;
    from = edit.at;
  }
  body += code.slice(from);
  return {
    source: `${WRAP_OPEN}${body}\nreturn ${name}; var ${name};\n})()`,
    shift: { insertions: insertionsOf(code, edits) },
  };
}

/** {@link COMPLETION}, made longer in the odd case the code already holds that text. */
function completionName(code: string): string {
  let name = COMPLETION;
  while (code.includes(name)) name += "$";
  return name;
}

interface Edit {
  /** Offset in the original code. */
  at: number;
  text: string;
}

type Statement = PositionedNode & Record<string, unknown>;

/** Text to insert so the statement list stores its completion value in `name`; sorted by offset, stable. */
function completionEdits(body: PositionedNode[], name: string): Edit[] {
  const edits: Edit[] = [];
  const reset = `${name} = void 0;`;
  // `inList`: the statement sits in a statement list, so a reset may go before it; in a
  // single-statement position (`if (a) while (b) …`) it and the reset are wrapped in braces.
  const visit = (node: Statement, prefixAt: number, inList: boolean): void => {
    switch (node.type) {
      case "ExpressionStatement": {
        if (typeof node.directive === "string") return;
        const expression = node.expression as PositionedNode;
        edits.push({ at: expression.start, text: `${name} = (` });
        edits.push({ at: expression.end, text: node.end === expression.end ? ");" : ")" });
        return;
      }
      case "BlockStatement":
        for (const child of node.body as Statement[]) visit(child, child.start, true);
        return;
      case "LabeledStatement":
        // A reset goes before the label: `l: x = void 0; while …` would label the wrong statement.
        visit(node.body as Statement, prefixAt, inList);
        return;
      case "IfStatement":
      case "SwitchStatement":
      case "WhileStatement":
      case "DoWhileStatement":
      case "ForStatement":
      case "ForInStatement":
      case "ForOfStatement":
      case "TryStatement":
      case "WithStatement": {
        edits.push({ at: prefixAt, text: inList ? reset : `{${reset}` });
        visitCompound(node);
        if (!inList) edits.push({ at: node.end, text: "}" });
        return;
      }
      default:
        // Declarations, empty statements, break/continue/return/throw/debugger produce no value.
        return;
    }
  };
  const visitCompound = (node: Statement): void => {
    const single = (child: unknown) => {
      if (child != null) visit(child as Statement, (child as Statement).start, false);
    };
    switch (node.type) {
      case "IfStatement":
        single(node.consequent);
        single(node.alternate);
        return;
      case "SwitchStatement":
        for (const switchCase of node.cases as Array<{ consequent: Statement[] }>) {
          for (const child of switchCase.consequent) visit(child, child.start, true);
        }
        return;
      case "TryStatement": {
        visit(node.block as Statement, 0, true);
        const handler = node.handler as { body: Statement } | null;
        if (handler != null) {
          // A catch's completion does not include what the try block produced before throwing.
          edits.push({ at: handler.body.start + 1, text: reset });
          visit(handler.body, 0, true);
        }
        const finalizer = node.finalizer as Statement | null;
        if (finalizer != null) {
          // A finally block that completes normally keeps the try/catch's completion.
          edits.push({ at: finalizer.start + 1, text: `let ${name}$saved = ${name};` });
          visit(finalizer, 0, true);
          edits.push({ at: finalizer.end - 1, text: `${name} = ${name}$saved;` });
        }
        return;
      }
      default:
        single(node.body);
    }
  };
  for (const statement of body as Statement[]) visit(statement, statement.start, true);
  // Stable: edits at one offset keep the order they were made in (outer opens, then inner; inner closes, then outer).
  return edits
    .map((edit, index) => ({ edit, index }))
    .sort((a, b) => a.edit.at - b.edit.at || a.index - b.index)
    .map(({ edit }) => edit);
}

/** The edits (sorted) as {@link WrapShift} insertions in wrapped coordinates, the wrapper's opening first. */
function insertionsOf(code: string, edits: Edit[]): WrapShift["insertions"] {
  const insertions: WrapShift["insertions"] = [[1, 0, WRAP_OPEN.length]];
  let line = 1;
  let lineStart = 0;
  let scanned = 0;
  let added = WRAP_OPEN.length;
  for (const edit of edits) {
    for (; scanned < edit.at; scanned++) {
      if (code.charCodeAt(scanned) === 10) {
        line++;
        lineStart = scanned + 1;
        added = 0;
      }
    }
    insertions.push([line, edit.at - lineStart + added, edit.text.length]);
    added += edit.text.length;
  }
  return insertions;
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
