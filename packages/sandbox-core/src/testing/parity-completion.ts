import { SANDBOX_CODES } from "../error-codes/sandbox-codes.js";
import type { SandboxResult } from "../types/sandbox-types.js";
import { thrownAt } from "./parity-expect.js";
import type { ParityRow } from "./parity-table.js";

const ok = (result: unknown) => ({ success: true as const, result, logs: [] });
const syntaxError = (message: string, line: number) => ({
  success: false as const,
  error: `SyntaxError: ${message} (line ${line}, column 1) (${SANDBOX_CODES.SYNTAX_ERROR})`,
  errorCode: SANDBOX_CODES.SYNTAX_ERROR,
  logs: [] as SandboxResult["logs"],
  guestError: { name: "SyntaxError", message, stack: "", line, column: 1 },
});

const FENCED =
  "the code is wrapped in Markdown fences (```); send the code without them, or pass it through normalizeModelCode()";
const UNCALLED_MAIN =
  "the code declares main() but never calls it, so nothing would run; end it with `await main()` (its value is the result)";

/**
 * Parity rows for completion values (see {@link ParityRow}); spread into PARITY_ROWS.
 * A script with top-level `await` completes with the value the same script has
 * without it (ECMAScript completion records), and model-shaped code that would
 * run to a silent `undefined` or an unrelated TypeError fails naming the fix.
 */
export const PARITY_COMPLETION_ROWS: readonly ParityRow[] = [
  {
    name: "completion: try/catch after a failing tool call is the catch's value",
    code: "try { await tools.fail({}) } catch (e) { e.message }",
    options: { hostCalls: { names: ["fail"], call: () => Promise.reject(new Error("tool said no")) } },
    expected: ok("tool said no"),
  },
  {
    name: "completion: try/catch after await",
    code: "try { await Promise.reject(new Error('nope')) } catch (e) { e.message }",
    expected: ok("nope"),
  },
  { name: "completion: if after await", code: "await 1; if (true) { 6 }", expected: ok(6) },
  {
    name: "completion: if/else after await",
    code: "const v = await Promise.resolve(0);\nif (v) { 'yes' } else { 'no' }",
    expected: ok("no"),
  },
  {
    name: "completion: an if that runs nothing is undefined",
    // The log tells this row from an engine that always succeeds with undefined.
    code: "await 1; console.log('ran'); 'before'; if (false) { 'never' }",
    expected: { success: true, result: undefined, logs: [{ level: "log", message: "ran" }] },
  },
  {
    name: "completion: switch after await",
    code: "const n = await Promise.resolve(5); switch (n) { case 5: 'five' }",
    expected: ok("five"),
  },
  {
    name: "completion: a loop whose body's last value wins",
    code: "let s = 0;\nfor (const v of [1, 2, 3]) { s += await v; s * 10 }",
    expected: ok(60),
  },
  {
    name: "completion: break in a loop keeps the value before it",
    code: "await 1; while (true) { 2; break; }",
    expected: ok(2),
  },
  {
    name: "completion: try/finally ignores the finally block's value",
    code: "try { await 'tried' } finally { 'ignored' }",
    expected: ok("tried"),
  },
  {
    name: "completion: declarations after the value keep it",
    code: "await 1; 'value'; const later = 2; var again = 3; function f() {}",
    expected: ok("value"),
  },
  {
    name: "completion: await inside a for-of",
    code: "const out = [];\nfor (const v of [1, 2]) out.push(await Promise.resolve(v * 2));\nout",
    expected: ok([2, 4]),
  },
  {
    name: "completion: a labelled block left by break",
    code: "await 1; found: { 'first'; break found; 'never' }",
    expected: ok("first"),
  },
  {
    name: "completion: top-level return still returns its value",
    code: "await 1; if (true) return 'early'; 'late'",
    expected: ok("early"),
  },
  {
    name: "completion: an error inside an instrumented if names the original line and column",
    code: "await 1;\nif (true) { 1; null.x }",
    expected: thrownAt("TypeError", "Cannot read properties of null (reading 'x')", 2, 21),
    byEngine: { quickjs: thrownAt("TypeError", "cannot read property 'x' of null", 2, 16) },
  },
  // ---- model-shaped code: say what is wrong instead of a TypeError or undefined ----
  {
    name: "model shape: code in Markdown fences",
    code: "```js\n2 + 3\n```",
    expected: syntaxError(FENCED, 1),
  },
  {
    name: "model shape: prose around a fenced block",
    code: "Here is the code:\n```javascript\nconst a = 2;\na * 21\n```",
    expected: syntaxError(FENCED, 2),
  },
  {
    name: "model shape: a program that only declares main",
    code: "async function main() {\n  return 42;\n}",
    expected: syntaxError(UNCALLED_MAIN, 1),
  },
  {
    name: "model shape: a lone async arrow fails as a function result, not undefined",
    code: "async () => {\n  const v = await Promise.resolve(42);\n  return v;\n}",
    // Not refused up front: the function is the result, and a function cannot leave the sandbox.
    expected: {
      success: false,
      error:
        "result cannot leave the sandbox: it is a function; return plain data (objects, arrays, strings, numbers, Date, Map, Set, typed arrays) (SANDBOX_RESULT_NOT_TRANSFERABLE)",
      errorCode: SANDBOX_CODES.RESULT_NOT_TRANSFERABLE,
      logs: [],
    },
  },
];
