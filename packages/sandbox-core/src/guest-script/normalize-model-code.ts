import { type Node, type Options, type Program, parse } from "acorn";
import { full } from "acorn-walk";

/** What {@link normalizeModelCode} made of a model's code. */
export interface NormalizedModelCode {
  /** The code to run; the input itself when nothing needed normalising. */
  code: string;
  /** What was normalised, in words (e.g. `"removed Markdown fences"`); empty when nothing was. */
  changes: string[];
}

interface Positioned extends Node {
  type: string;
  start: number;
  end: number;
}
interface Statement extends Positioned {
  expression?: Positioned;
  declaration?: Positioned & { id?: { name: string } | null };
  declarations?: Array<{ id: Positioned & { name?: string }; init?: Positioned | null }>;
  id?: { name: string } | null;
  directive?: string;
}

const SCRIPT: Options = {
  ecmaVersion: "latest",
  sourceType: "script",
  allowAwaitOutsideFunction: true,
  allowReturnOutsideFunction: true,
  allowHashBang: true,
};
const MODULE: Options = {
  ecmaVersion: "latest",
  sourceType: "module",
  allowReturnOutsideFunction: true,
  allowHashBang: true,
};

/** Info strings of a fenced block that holds JavaScript (or TypeScript, which is unwrapped, not stripped). */
const JS_FENCES = new Set([
  "",
  "js",
  "javascript",
  "mjs",
  "cjs",
  "jsx",
  "node",
  "ts",
  "typescript",
  "tsx",
  "mts",
]);
const TS_FENCES = new Set(["ts", "typescript", "tsx", "mts"]);
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const FUNCTION_TYPES = new Set(["ArrowFunctionExpression", "FunctionExpression"]);

/**
 * Turn code as language models tend to send it into a script the sandbox runs
 * with the value the model meant. Pure and string-to-string (built on acorn);
 * line numbers of the model's code stay the same, so errors still point at the
 * line the model wrote. What it handles:
 *
 * - **Markdown fences** (```` ```js ````, ```` ```javascript ````, ```` ```ts ````, none, or `~~~`):
 *   the code is taken out of its block and the prose and fence lines around it
 *   become empty lines. With several blocks, the JavaScript/TypeScript ones
 *   (and unlabelled ones) are joined in order, as models split one program
 *   into steps; blocks in other languages (```` ```bash ````, ```` ```json ````) are
 *   dropped. A `ts` block is only unwrapped: its types are not stripped.
 *   Fences are only taken out when the code starts with one or does not parse
 *   as JavaScript as it is, so a template literal holding backticks is safe.
 * - **`export default <expression>`**: the expression becomes the result;
 *   `export default async function main() {…}` (or any default-exported
 *   function) is called and awaited. Other `export` keywords are dropped.
 *   Code that also has `import` declarations is left alone.
 * - **A program that only declares `main`** (a function declaration or a
 *   `const main = …` function, async or not) and never calls it: `main()` is
 *   called and awaited and its value is the result.
 * - **A lone function or arrow expression** (`async () => { … }`): called and
 *   awaited.
 *
 * Everything else is returned unchanged with no changes. Plain
 * `sandbox.execute` does not call this, so only callers that opt in (the code
 * tool, the MCP server) rewrite code; it fails fenced code and an uncalled
 * `main` with `SANDBOX_SYNTAX_ERROR` naming the fix, and a lone function with
 * `SANDBOX_RESULT_NOT_TRANSFERABLE` (a function is not a result).
 *
 * @example
 * normalizeModelCode("```js\nasync () => 6 * 7\n```")
 * // → { code: "\nawait (async () => 6 * 7)()", changes: ["removed the Markdown fences (```js) around the code", "called and awaited the lone function expression"] }
 */
export function normalizeModelCode(code: string): NormalizedModelCode {
  const changes: string[] = [];
  let current = code;
  const unfenced = unfence(current);
  if (unfenced !== undefined) {
    current = unfenced.code;
    changes.push(...unfenced.changes);
  }
  const shaped = reshape(current);
  if (shaped !== undefined) {
    current = shaped.code;
    changes.push(...shaped.changes);
  }
  return changes.length === 0 ? { code, changes } : { code: current, changes };
}

/**
 * The shape of model-written code that plain `execute` refuses (see `prepareGuestCode`). A lone
 * function expression is not among them: run as written it already fails, with
 * `SANDBOX_RESULT_NOT_TRANSFERABLE` ("result … is a function").
 */
export type ModelCodeShape = "markdown-fence" | "uncalled-main";

/**
 * Which {@link ModelCodeShape} `code` has, if any: code that would otherwise
 * run to a silent `undefined` or an unrelated TypeError. `program` is its
 * script parse when it has one.
 */
export function detectModelCodeShape(code: string, program?: Program): ModelCodeShape | undefined {
  if (startsWithFence(code) && fencedBlocks(code).length > 0) return "markdown-fence";
  if (program === undefined) {
    if (parseOrUndefined(code, SCRIPT) === undefined && fencedBlocks(code).length > 0)
      return "markdown-fence";
    return undefined;
  }
  if (uncalledMain(program) !== undefined) return "uncalled-main";
  return undefined;
}

interface FencedBlock {
  lang: string;
  /** 0-based line indexes of the block's content (fence lines excluded). */
  from: number;
  to: number;
}

function fencedBlocks(code: string): FencedBlock[] {
  const lines = code.split("\n");
  const blocks: FencedBlock[] = [];
  let open: { char: string; length: number; lang: string; from: number } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/\r$/, "");
    if (open === undefined) {
      const match = FENCE_OPEN.exec(line);
      if (match === null) continue;
      const fence = match[1] as string;
      // A backtick fence's info string may not hold backticks (CommonMark); a tilde fence's may.
      open = {
        char: fence[0] as string,
        length: fence.length,
        lang: (match[2] ?? "").toLowerCase(),
        from: i + 1,
      };
    } else {
      const trimmed = line.trim();
      if (
        trimmed.length >= open.length &&
        /^ {0,3}/.test(line) &&
        trimmed === open.char.repeat(trimmed.length)
      ) {
        blocks.push({ lang: open.lang, from: open.from, to: i });
        open = undefined;
      }
    }
  }
  // An unclosed block runs to the end (CommonMark), as a truncated reply does.
  if (open !== undefined) blocks.push({ lang: open.lang, from: open.from, to: lines.length });
  return blocks;
}

function startsWithFence(code: string): boolean {
  const first = code.split("\n").find((line) => line.trim() !== "");
  return first !== undefined && FENCE_OPEN.test(first.replace(/\r$/, ""));
}

function unfence(code: string): NormalizedModelCode | undefined {
  const blocks = fencedBlocks(code);
  if (blocks.length === 0) return undefined;
  if (!startsWithFence(code) && parseOrUndefined(code, SCRIPT) !== undefined) return undefined;
  const taken = blocks.filter((block) => JS_FENCES.has(block.lang));
  if (taken.length === 0) return undefined;
  const lines = code.split("\n");
  const keep = new Array<boolean>(lines.length).fill(false);
  for (const block of taken) for (let i = block.from; i < block.to; i++) keep[i] = true;
  // Lines outside the taken blocks become empty so the code keeps its line numbers.
  const out = lines
    .map((line, i) => (keep[i] ? line : ""))
    .join("\n")
    .replace(/\s+$/, "");
  const first = taken[0] as FencedBlock;
  const onlyFences = lines.every((line, i) => keep[i] || line.trim() === "" || isFenceLine(line));
  const label = first.lang === "" ? "```" : `\`\`\`${first.lang}`;
  const changes: string[] = [];
  if (taken.length === 1 && blocks.length === 1 && onlyFences) {
    changes.push(`removed the Markdown fences (${label}) around the code`);
  } else if (taken.length === 1) {
    changes.push("took the code out of its Markdown code block and dropped the text around it");
  } else {
    changes.push(
      `joined the code of ${taken.length} Markdown code blocks in order and dropped the text around them`,
    );
  }
  const skipped = blocks.filter((block) => !JS_FENCES.has(block.lang));
  if (skipped.length > 0) {
    const langs = [...new Set(skipped.map((block) => block.lang))].join(", ");
    changes.push(
      `dropped ${skipped.length} code block${skipped.length === 1 ? "" : "s"} in another language (${langs})`,
    );
  }
  if (taken.some((block) => TS_FENCES.has(block.lang))) {
    changes.push("left TypeScript types in place (the fence said TypeScript; the sandbox runs JavaScript)");
  }
  return { code: out, changes };
}

function isFenceLine(line: string): boolean {
  return FENCE_OPEN.test(line.replace(/\r$/, "")) || /^ {0,3}(`{3,}|~{3,})\s*$/.test(line);
}

function parseOrUndefined(code: string, options: Options): Program | undefined {
  try {
    return parse(code, options);
  } catch {
    return undefined;
  }
}

interface Edit {
  at: number;
  end: number;
  text: string;
}

function splice(code: string, edits: Edit[]): string {
  let out = code;
  for (const edit of [...edits].sort((a, b) => b.at - a.at)) {
    out = `${out.slice(0, edit.at)}${edit.text}${out.slice(edit.end)}`;
  }
  return out;
}

function reshape(code: string): NormalizedModelCode | undefined {
  const script = parseOrUndefined(code, SCRIPT);
  if (script !== undefined) return reshapeScript(code, script);
  const module = parseOrUndefined(code, MODULE);
  if (module !== undefined) return unexport(code, module);
  // `async function () { … }` alone is not a statement; as an expression it is a lone function.
  const wrapped = parseOrUndefined(`(${code}\n)`, SCRIPT);
  if (wrapped !== undefined && loneFunction(wrapped.body as unknown as Statement[]) !== undefined) {
    return { code: `await (${code}\n)()`, changes: ["called and awaited the lone function expression"] };
  }
  return undefined;
}

function reshapeScript(code: string, program: Program): NormalizedModelCode | undefined {
  const lone = loneFunction(program.body as unknown as Statement[]);
  if (lone !== undefined) {
    return {
      code: splice(code, [
        { at: lone.start, end: lone.start, text: "await (" },
        { at: lone.end, end: lone.end, text: ")()" },
      ]),
      changes: ["called and awaited the lone function expression"],
    };
  }
  const main = uncalledMain(program);
  if (main !== undefined) {
    return {
      code: `${code}\nawait main();`,
      changes: ["called and awaited main(), which was declared but never called"],
    };
  }
  return undefined;
}

function loneFunction(body: Statement[]): Positioned | undefined {
  if (body.length !== 1) return undefined;
  const only = body[0] as Statement;
  return only.type === "ExpressionStatement" &&
    only.expression !== undefined &&
    FUNCTION_TYPES.has(only.expression.type)
    ? only.expression
    : undefined;
}

/** `main`'s declaration when the program only declares things, `main` among them, and never refers to it. */
function uncalledMain(program: Program): Positioned | undefined {
  const body = program.body as unknown as Statement[];
  let main: Positioned | undefined;
  for (const statement of body) {
    if (statement.type === "FunctionDeclaration") {
      if (statement.id?.name === "main") main = statement;
    } else if (statement.type === "VariableDeclaration") {
      for (const declarator of statement.declarations ?? []) {
        if (
          declarator.id.name === "main" &&
          declarator.init != null &&
          FUNCTION_TYPES.has(declarator.init.type)
        ) {
          main = statement;
        }
      }
    } else if (
      statement.type !== "ClassDeclaration" &&
      statement.type !== "EmptyStatement" &&
      statement.directive === undefined
    ) {
      return undefined;
    }
  }
  if (main === undefined) return undefined;
  const declaration = main;
  let referenced = false;
  full(program, (node) => {
    const positioned = node as Positioned & { name?: string };
    if (positioned.type !== "Identifier" || positioned.name !== "main") return;
    if (positioned.start >= declaration.start && positioned.end <= declaration.end) return;
    referenced = true;
  });
  return referenced ? undefined : declaration;
}

/** Drop `export`s from a module that has no imports; a default export becomes the result. */
function unexport(code: string, program: Program): NormalizedModelCode | undefined {
  const body = program.body as unknown as Statement[];
  if (body.some((statement) => statement.type === "ImportDeclaration")) return undefined;
  const edits: Edit[] = [];
  const changes: string[] = [];
  let dropped = false;
  for (const statement of body) {
    if (statement.type === "ExportNamedDeclaration") {
      dropped = true;
      const declaration = statement.declaration;
      if (declaration == null) edits.push({ at: statement.start, end: statement.end, text: "" });
      else edits.push({ at: statement.start, end: declaration.start, text: "" });
    } else if (statement.type === "ExportDefaultDeclaration") {
      const declaration = statement.declaration as Positioned & { id?: { name: string } | null };
      const isFunction = declaration.type === "FunctionDeclaration" || FUNCTION_TYPES.has(declaration.type);
      if (isFunction && declaration.type === "FunctionDeclaration" && declaration.id != null) {
        const name = declaration.id.name;
        edits.push({ at: statement.start, end: declaration.start, text: "" });
        edits.push({ at: code.length, end: code.length, text: `\nawait ${name}();` });
        changes.push(`called and awaited the default-exported function ${name}()`);
      } else if (isFunction) {
        edits.push({ at: statement.start, end: declaration.start, text: "await (" });
        edits.push({ at: declaration.end, end: declaration.end, text: ")()" });
        changes.push("called and awaited the default-exported function");
      } else {
        // Parentheses keep `export default { a: 1 }` an object, not a block.
        edits.push({ at: statement.start, end: declaration.start, text: "(" });
        edits.push({ at: declaration.end, end: declaration.end, text: ")" });
        changes.push("made the `export default` expression the result");
      }
    }
  }
  if (edits.length === 0) return undefined;
  if (dropped) changes.push("removed `export` keywords");
  const out = splice(code, edits);
  // Only hand back what runs as a script; anything else stays as written for the engine to report.
  return parseOrUndefined(out, SCRIPT) === undefined ? undefined : { code: out, changes };
}
