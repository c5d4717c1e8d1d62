import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import { describeGuestGlobals, normalizeModelCode } from "@suaveplan/sandbox-core/guest-script";
import { type JsonValue, type RunReportCall, renderRunReport } from "@suaveplan/sandbox-core/render";
import { type Tool, tool } from "ai";
import { z } from "zod";
import type { Sandbox } from "../sandbox/index.js";

/** Options of {@link createCodeTool}. */
export interface CodeToolOptions {
  /** The sandbox the programs run in; its tools are what the program can call. The caller destroys it. */
  sandbox: Sandbox;
  /**
   * The tool's description. A string replaces the generated one; a function
   * receives the generated one (what to write, the tools' declarations, the
   * guest's globals, the limits) and returns what the model is told, e.g. with
   * your own instructions added.
   */
  description?: string | ((generated: string) => string) | undefined;
  /** Bytes of the tool's output (its JSON) at most; what did not fit is cut and `truncated` says what. Default 65,536. */
  maxOutputBytes?: number | undefined;
  /** Wall-clock limit of one program in ms (default: the sandbox's `timeout`). */
  timeout?: number | undefined;
  /** Passed to the AI SDK's `tool()`: ask the application before any program runs. */
  needsApproval?: Tool<CodeToolInput, CodeToolOutput>["needsApproval"];
}

/** What the model sends. */
export interface CodeToolInput {
  /** The JavaScript program. */
  code: string;
}

/** What the code tool returns for a run, within `maxOutputBytes`. */
export interface CodeToolOutput {
  success: boolean;
  /** What was changed in the model's code before it ran (Markdown fences removed, `main()` called …); absent when nothing was. */
  normalised?: string[];
  /** The completion value as JSON: what JSON cannot say is a one-key tag (`{"$bigint":"5"}` …), `{"$cut":…}` marks a cut. */
  result?: JsonValue;
  /** Why the run failed, ending with its code. */
  error?: string;
  errorCode?: string;
  /** Where in the program the error was thrown, when known. */
  line?: number;
  column?: number;
  /** The program's console output, in order. */
  logs: Array<{ level: string; message: string }>;
  /** Every host-tool call the program made, in call order (status, input, output or error). */
  calls: RunReportCall[];
  /** What was cut to keep the output within `maxOutputBytes`. */
  truncated?: string;
}

const DEFAULT_MAX_OUTPUT_BYTES = 65_536;
/** Below this a report cannot hold an error message and a cut result. */
const MIN_OUTPUT_BYTES = 1_024;
/** How toolDeclarations() says there are no tools (whatever follows it). */
const EMPTY_TOOLS = /(?:^|\n)declare const tools: \{\s*\};/;

/**
 * An AI SDK tool ("code mode"): the model writes one JavaScript program that
 * calls the sandbox's host tools with `await tools.<name>(input)`; the tool
 * runs it in `sandbox` and returns the completion value, the console output and
 * the journal of tool calls, bounded to `maxOutputBytes`. The description tells
 * the model how to write the program and lists the tools' TypeScript
 * declarations and the guest's globals. Code as models send it (in Markdown
 * fences, as `export default`, an uncalled `main`) is normalised first and
 * `normalised` says what changed. The SDK's `abortSignal` cancels the running
 * program and aborts its pending tool calls. A failed run is an output with
 * `success: false` (sent to the model as an error), not a thrown error, so the
 * model also sees the logs and the calls that already ran.
 * @throws SandboxError (`SANDBOX_INVALID_OPTIONS`) when `sandbox` is not a sandbox, or `maxOutputBytes`,
 * `timeout` or `description` has the wrong type or range.
 * @example
 * const result = await generateText({ model, tools: { runCode: createCodeTool({ sandbox }) }, prompt });
 */
export function createCodeTool(options: CodeToolOptions): Tool<CodeToolInput, CodeToolOutput> {
  const { sandbox, maxOutputBytes, timeout, description } = checkOptions(options);
  const generated = generatedDescription(sandbox, timeout, maxOutputBytes);
  return tool<CodeToolInput, CodeToolOutput, Record<string, never>>({
    description:
      description === undefined
        ? generated
        : typeof description === "string"
          ? description
          : description(generated),
    inputSchema: z.object({
      code: z
        .string()
        .min(1)
        .describe(
          "A JavaScript program; the value of its last expression (or what it returns) is the result",
        ),
    }),
    ...(options.needsApproval === undefined ? {} : { needsApproval: options.needsApproval }),
    execute: async ({ code }, { abortSignal }) => {
      const normalised = normalizeModelCode(code);
      const run = await sandbox.execute(normalised.code, undefined, {
        language: "javascript",
        ...(timeout === undefined ? {} : { timeout }),
        ...(abortSignal === undefined ? {} : { signal: abortSignal }),
      });
      const report = renderRunReport(run, {
        maxBytes: maxOutputBytes,
        ...(normalised.changes.length === 0 ? {} : { head: { normalised: normalised.changes } }),
      });
      // Flattening the error ({ code, message } to errorCode, error) only shortens the JSON: the bound holds.
      const { error } = report;
      return {
        success: report.success,
        ...(report.normalised === undefined ? {} : { normalised: report.normalised as string[] }),
        ...(report.result === undefined ? {} : { result: report.result }),
        ...(error === undefined ? {} : { error: error.message, errorCode: error.code }),
        ...(error?.line === undefined ? {} : { line: error.line }),
        ...(error?.column === undefined ? {} : { column: error.column }),
        logs: report.logs,
        calls: report.calls,
        ...(report.truncated === undefined ? {} : { truncated: report.truncated }),
      };
    },
    // A failed run goes to the model as an error result (providers mark it so), with everything it did.
    toModelOutput: ({ output }) =>
      output.success
        ? { type: "json", value: output as unknown as JsonValue }
        : { type: "error-json", value: output as unknown as JsonValue },
  });
}

function generatedDescription(sandbox: Sandbox, timeout: number | undefined, maxOutputBytes: number): string {
  const declarations = sandbox.toolDeclarations();
  const hasTools = !EMPTY_TOOLS.test(declarations);
  const globals = describeGuestGlobals();
  // Declarations that already list the globals (as comments) are not followed by a second copy.
  const listsGlobals = declarations.includes(globals.split("\n")[0] ?? globals);
  const { config } = sandbox;
  return [
    "Run a JavaScript program in a sandbox and get back its result, its console output and the host-tool calls it made.",
    "Write plain JavaScript (a script, not a module): the value of the last expression statement is the result, or `return` a value; top-level await works. There is no import, require, process, file system or network.",
    hasTools
      ? `Call the host tools with await, e.g. \`const x = await tools.name(input)\`; several calls can run at once with Promise.all. Their TypeScript declarations:\n\`\`\`ts\n${declarations}\n\`\`\``
      : "No host tools are configured.",
    ...(listsGlobals && hasTools ? [] : [globals]),
    `Limits: ${timeout ?? config.timeout} ms per program, ${Math.round(config.memoryLimit / 1024 / 1024)} MiB of heap; the output is kept within ${maxOutputBytes} bytes and "truncated" says what was cut. On failure, "error" says why and "calls" what already ran.`,
  ].join("\n");
}

function checkOptions(options: CodeToolOptions): {
  sandbox: Sandbox;
  maxOutputBytes: number;
  timeout: number | undefined;
  description: CodeToolOptions["description"];
} {
  const fail = (message: string): never => {
    throw new SandboxError(SANDBOX_CODES.INVALID_OPTIONS, `createCodeTool: ${message}`);
  };
  if (options === null || typeof options !== "object") {
    return fail(`options must be an object with a sandbox (got ${String(options)}); pass { sandbox }`);
  }
  const { sandbox, maxOutputBytes = DEFAULT_MAX_OUTPUT_BYTES, timeout, description } = options;
  if (
    sandbox === null ||
    typeof sandbox !== "object" ||
    typeof sandbox.execute !== "function" ||
    typeof sandbox.toolDeclarations !== "function"
  ) {
    fail(
      `options.sandbox must be a sandbox from createSandbox() (got ${sandbox === null ? "null" : typeof sandbox}); pass { sandbox: createSandbox({ engine: "isolate", tools }) }`,
    );
  }
  if (!Number.isSafeInteger(maxOutputBytes) || maxOutputBytes < MIN_OUTPUT_BYTES) {
    fail(
      `options.maxOutputBytes must be an integer >= ${MIN_OUTPUT_BYTES} (got ${String(maxOutputBytes)}); pass a byte count such as ${DEFAULT_MAX_OUTPUT_BYTES}`,
    );
  }
  if (timeout !== undefined && (!Number.isSafeInteger(timeout) || timeout < 1)) {
    fail(
      `options.timeout must be a positive integer of ms (got ${String(timeout)}); pass e.g. 5000, or leave it out for the sandbox's`,
    );
  }
  if (description !== undefined && typeof description !== "string" && typeof description !== "function") {
    fail(
      `options.description must be a string or a function of the generated description (got ${typeof description})`,
    );
  }
  return { sandbox, maxOutputBytes, timeout, description };
}
