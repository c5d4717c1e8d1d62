import {
  ABSENT_GUEST_GLOBALS,
  describeGuestGlobals,
  GUEST_GLOBALS,
} from "@suaveplan/sandbox-core/guest-script";
import { generateText, isStepCount, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type CreateSandboxConfig, createSandbox, type Sandbox } from "../sandbox/index.js";
import { createCodeTool } from "./create-code-tool.js";

/** The first line of the globals list, whichever part of the description carries it. */
const GLOBALS_HEADING = describeGuestGlobals().split("\n")[0] as string;

// The isolate engine: the one to show (the only security boundary); runs in helper processes.
const sandboxOf = (config: Partial<CreateSandboxConfig> = {}): Sandbox =>
  createSandbox({ engine: "isolate", timeout: 5_000, ...config });

// The provider spec's types, as the mock model states them (@ai-sdk/provider is not ours to import).
type LanguageModelV4CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];
type LanguageModelV4GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model call that asks for the code tool. */
const callCode = (code: string, toolCallId = "call-1"): LanguageModelV4GenerateResult => ({
  content: [{ type: "tool-call", toolCallId, toolName: "runCode", input: JSON.stringify({ code }) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
});

/** A model call that answers with text. */
const answer = (text: string): LanguageModelV4GenerateResult => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: undefined },
  usage,
  warnings: [],
});

/** The tool message the model was sent in `prompt`: what toModelOutput made of the run. */
const toolMessageOutput = (prompt: LanguageModelV4CallOptions["prompt"]): unknown => {
  const message = prompt.find((entry) => entry.role === "tool");
  const part = message?.content[0];
  return part !== undefined && part.type === "tool-result" ? part.output : undefined;
};

/** A scripted model: each step is a result, or a function of what it was sent. */
function scriptedModel(
  steps: Array<
    LanguageModelV4GenerateResult | ((options: LanguageModelV4CallOptions) => LanguageModelV4GenerateResult)
  >,
): MockLanguageModelV4 {
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: async (options) => {
      const next = steps[step++];
      if (next === undefined) throw new Error(`the script has no step ${step}`);
      return typeof next === "function" ? next(options) : next;
    },
  });
}

const weatherTools = {
  getWeather: {
    description: "Current weather for a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => ({ tempC: city === "Paris" ? 21 : 4 }),
  },
  convert: {
    description: "EUR to another currency",
    inputSchema: z.object({ eur: z.number(), to: z.string() }),
    execute: async ({ eur, to }: { eur: number; to: string }) => (to === "NOK" ? eur * 11 : eur),
  },
};

const FENCED = [
  "Here is the program:",
  "```js",
  "const [paris, oslo] = await Promise.all([",
  "  tools.getWeather({ city: 'Paris' }),",
  "  tools.getWeather({ city: 'Oslo' }),",
  "]);",
  "const warmest = paris.tempC > oslo.tempC ? 'Paris' : 'Oslo';",
  "console.log('warmest:', warmest);",
  "const nok = await tools.convert({ eur: 100, to: 'NOK' });",
  "({ warmest, nok })",
  "```",
].join("\n");

describe("createCodeTool in a generateText loop", () => {
  it("runs a fenced program that awaits host tools, and the model answers from its result", async () => {
    const sandbox = sandboxOf({ tools: weatherTools });
    try {
      const model = scriptedModel([
        callCode(FENCED),
        (options) => {
          const output = toolMessageOutput(options.prompt) as {
            value: { result: { warmest: string; nok: number } };
          };
          const { warmest, nok } = output.value.result;
          return answer(`Go to ${warmest}; 100 EUR is ${nok} NOK.`);
        },
      ]);
      const result = await generateText({
        model,
        tools: { runCode: createCodeTool({ sandbox }) },
        prompt: "Where is it warmer, Paris or Oslo? And what is 100 EUR in NOK?",
        stopWhen: isStepCount(5),
      });
      const output = {
        success: true,
        normalised: ["took the code out of its Markdown code block and dropped the text around it"],
        result: { warmest: "Paris", nok: 1100 },
        logs: [{ level: "log", message: "warmest: Paris" }],
        calls: [
          {
            tool: "getWeather",
            status: "ok",
            input: { city: "Paris" },
            output: { tempC: 21 },
            durationMs: expect.any(Number),
          },
          {
            tool: "getWeather",
            status: "ok",
            input: { city: "Oslo" },
            output: { tempC: 4 },
            durationMs: expect.any(Number),
          },
          {
            tool: "convert",
            status: "ok",
            input: { eur: 100, to: "NOK" },
            output: 1100,
            durationMs: expect.any(Number),
          },
        ],
      };
      expect(result.steps.map((step) => step.content)).toEqual([
        [
          { type: "tool-call", toolCallId: "call-1", toolName: "runCode", input: { code: FENCED } },
          {
            type: "tool-result",
            toolCallId: "call-1",
            toolName: "runCode",
            input: { code: FENCED },
            output,
            dynamic: false,
          },
        ],
        [{ type: "text", text: "Go to Paris; 100 EUR is 1100 NOK." }],
      ]);
      expect(result.text).toBe("Go to Paris; 100 EUR is 1100 NOK.");
      // What the model was sent back: the same output, as JSON.
      expect(toolMessageOutput(model.doGenerateCalls[1]?.prompt ?? [])).toEqual({
        type: "json",
        value: output,
      });
    } finally {
      await sandbox.destroy();
    }
  });

  it("tells the model how to write the program, the tools' declarations and the guest globals", async () => {
    const sandbox = sandboxOf({ tools: weatherTools, timeout: 3_000 });
    const bare = sandboxOf();
    try {
      const model = scriptedModel([answer("ok")]);
      await generateText({
        model,
        tools: {
          runCode: createCodeTool({ sandbox, maxOutputBytes: 20_000 }),
          extended: createCodeTool({
            sandbox,
            description: (generated) => `${generated}\nPrefer one program.`,
          }),
          replaced: createCodeTool({ sandbox, description: "Run JavaScript." }),
          noTools: createCodeTool({ sandbox: bare }),
        },
        prompt: "hi",
      });
      const sent = model.doGenerateCalls[0]?.tools ?? [];
      const description = (name: string): string =>
        String(
          (sent.find((entry) => entry.name === name) as { description?: string } | undefined)?.description,
        );
      const generated = description("runCode");
      expect(generated.split("\n").slice(0, 9)).toEqual([
        "Run a JavaScript program in a sandbox and get back its result, its console output and the host-tool calls it made.",
        "Write plain JavaScript (a script, not a module): the value of the last expression statement is the result, or `return` a value; top-level await works. There is no import, require, process, file system or network.",
        "Call the host tools with await, e.g. `const x = await tools.name(input)`; several calls can run at once with Promise.all. Their TypeScript declarations:",
        "```ts",
        "declare const tools: {",
        "  /** Current weather for a city */",
        "  getWeather(input: { city: string }): Promise<unknown>;",
        "  /** EUR to another currency */",
        "  convert(input: { eur: number; to: string }): Promise<unknown>;",
      ]);
      expect(generated).toContain(sandbox.toolDeclarations());
      // Every guest global and every deliberate absence, listed once (the declarations may already carry them).
      for (const { name, summary } of [...GUEST_GLOBALS, ...ABSENT_GUEST_GLOBALS]) {
        expect(generated).toContain(`- ${name}: ${summary}`);
      }
      expect(["URL", "structuredClone", "fetch"].every((name) => generated.includes(`- ${name}: `))).toBe(
        true,
      );
      expect(generated.split(GLOBALS_HEADING).length).toBe(2);
      expect(generated.split("\n").at(-1)).toBe(
        'Limits: 3000 ms per program, 128 MiB of heap; the output is kept within 20000 bytes and "truncated" says what was cut. On failure, "error" says why and "calls" what already ran.',
      );
      expect(description("extended")).toBe(
        `${generated.replace("within 20000 bytes", "within 65536 bytes")}\nPrefer one program.`,
      );
      expect(description("replaced")).toBe("Run JavaScript.");
      expect(description("noTools").split("\n").slice(0, 3)).toEqual([
        "Run a JavaScript program in a sandbox and get back its result, its console output and the host-tool calls it made.",
        "Write plain JavaScript (a script, not a module): the value of the last expression statement is the result, or `return` a value; top-level await works. There is no import, require, process, file system or network.",
        "No host tools are configured.",
      ]);
      expect(description("noTools").split(GLOBALS_HEADING).length).toBe(2);
      expect(sent.find((entry) => entry.name === "runCode")).toMatchObject({
        inputSchema: {
          type: "object",
          properties: { code: { type: "string", minLength: 1 } },
          required: ["code"],
          additionalProperties: false,
        },
      });
    } finally {
      await sandbox.destroy();
      await bare.destroy();
    }
  });

  it("a failed run is an output with success false, sent to the model as an error with the calls that ran", async () => {
    const sandbox = sandboxOf({ tools: weatherTools });
    try {
      const code =
        "const w = await tools.getWeather({ city: 'Paris' });\nthrow new Error('too warm: ' + w.tempC);";
      const model = scriptedModel([callCode(code), answer("It failed.")]);
      const result = await generateText({
        model,
        tools: { runCode: createCodeTool({ sandbox }) },
        prompt: "go",
        stopWhen: isStepCount(5),
      });
      const output = {
        success: false,
        error: expect.stringMatching(/^Error: too warm: 21/),
        errorCode: "SANDBOX_GUEST_ERROR",
        line: 2,
        column: expect.any(Number),
        logs: [],
        calls: [
          {
            tool: "getWeather",
            status: "ok",
            input: { city: "Paris" },
            output: { tempC: 21 },
            durationMs: expect.any(Number),
          },
        ],
      };
      expect(result.steps[0]?.toolResults).toEqual([
        {
          type: "tool-result",
          toolCallId: "call-1",
          toolName: "runCode",
          input: { code },
          output,
          dynamic: false,
        },
      ]);
      expect(toolMessageOutput(model.doGenerateCalls[1]?.prompt ?? [])).toEqual({
        type: "error-json",
        value: output,
      });
    } finally {
      await sandbox.destroy();
    }
  });

  it("an approveToolCall hook on the sandbox denies a host call inside the program; the journal says so", async () => {
    let transferred = 0;
    const sandbox = sandboxOf({
      tools: {
        ...weatherTools,
        transfer: {
          description: "Move money",
          inputSchema: z.object({ eur: z.number() }),
          execute: async ({ eur }: { eur: number }) => {
            transferred += eur;
            return "done";
          },
        },
      },
      approveToolCall: (call) => call.tool !== "transfer" || (call.input as { eur: number }).eur <= 100,
    });
    try {
      const code = [
        "const small = await tools.transfer({ eur: 50 });",
        "let big;",
        "try { big = await tools.transfer({ eur: 5000 }); } catch (e) { big = e.message; }",
        "[small, big]",
      ].join("\n");
      const result = await generateText({
        model: scriptedModel([callCode(code), answer("ok")]),
        tools: { runCode: createCodeTool({ sandbox }) },
        prompt: "pay",
        stopWhen: isStepCount(5),
      });
      expect(result.steps[0]?.toolResults[0]?.output).toEqual({
        success: true,
        result: ["done", "tool transfer was denied"],
        logs: [],
        calls: [
          {
            tool: "transfer",
            status: "ok",
            input: { eur: 50 },
            output: "done",
            durationMs: expect.any(Number),
          },
          {
            tool: "transfer",
            status: "denied",
            input: { eur: 5000 },
            error: { name: "ToolError", message: "tool transfer was denied" },
            durationMs: expect.any(Number),
          },
        ],
      });
      expect(transferred).toBe(50);
    } finally {
      await sandbox.destroy();
    }
  });

  it("a host tool's own needsApproval goes through the sandbox's approveToolCall hook inside the program", async () => {
    const deleted: string[] = [];
    const asked: unknown[] = [];
    const sandbox = sandboxOf({
      // An AI SDK tool as written for an agent: it needs approval. (ai 7 types `description` as
      // string | function; sandbox-tools' ToolDefinition takes a string, hence the cast.)
      tools: {
        deleteUser: tool({
          description: "Delete a user account",
          inputSchema: z.object({ userId: z.string() }),
          needsApproval: true,
          execute: async ({ userId }: { userId: string }) => {
            deleted.push(userId);
            return { deleted: userId };
          },
        }),
      },
      approveToolCall: ({ abortSignal: _, ...request }) => {
        asked.push(request);
        return (request.input as { userId: string }).userId === "u1";
      },
    });
    try {
      const code = [
        "const one = await tools.deleteUser({ userId: 'u1' });",
        "const two = await tools.deleteUser({ userId: 'admin' }).catch((e) => e.message);",
        "[one, two]",
      ].join("\n");
      const result = await generateText({
        model: scriptedModel([callCode(code), answer("ok")]),
        tools: { runCode: createCodeTool({ sandbox }) },
        prompt: "clean up",
        stopWhen: isStepCount(5),
      });
      const output = result.steps[0]?.toolResults[0]?.output as { result: unknown; calls: unknown[] };
      expect(output.result).toEqual([{ deleted: "u1" }, "tool deleteUser was denied"]);
      expect(output.calls).toEqual([
        {
          tool: "deleteUser",
          status: "ok",
          input: { userId: "u1" },
          output: { deleted: "u1" },
          durationMs: expect.any(Number),
        },
        {
          tool: "deleteUser",
          status: "denied",
          input: { userId: "admin" },
          error: { name: "ToolError", message: "tool deleteUser was denied" },
          durationMs: expect.any(Number),
        },
      ]);
      expect(deleted).toEqual(["u1"]);
      expect(asked).toEqual([
        { tool: "deleteUser", input: { userId: "u1" }, toolCallId: expect.any(String), needsApproval: true },
        {
          tool: "deleteUser",
          input: { userId: "admin" },
          toolCallId: expect.any(String),
          needsApproval: true,
        },
      ]);
    } finally {
      await sandbox.destroy();
    }
  });

  it("the code tool's own needsApproval is passed to tool(): generateText asks before any program runs", async () => {
    const sandbox = sandboxOf();
    try {
      const result = await generateText({
        model: scriptedModel([callCode("6 * 7"), answer("never")]),
        tools: { runCode: createCodeTool({ sandbox, needsApproval: true }) },
        prompt: "go",
        stopWhen: isStepCount(5),
      });
      expect(result.steps.length).toBe(1);
      expect(result.steps[0]?.content.map((part) => part.type)).toEqual([
        "tool-call",
        "tool-approval-request",
      ]);
      expect(sandbox.getAuditLog()).toEqual([]);
    } finally {
      await sandbox.destroy();
    }
  });

  it("generateText's abortSignal cancels the running program promptly and aborts its pending host call", async () => {
    let handlerAborted = false;
    let started: () => void = () => undefined;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    const sandbox = sandboxOf({
      timeout: 20_000,
      tools: {
        slow: {
          description: "Takes a minute",
          inputSchema: z.object({}),
          execute: (_input: unknown, { abortSignal }: { abortSignal: AbortSignal }) =>
            new Promise((resolve) => {
              started();
              abortSignal.addEventListener("abort", () => {
                handlerAborted = true;
                resolve("too late");
              });
            }),
        },
      },
    });
    try {
      const controller = new AbortController();
      const running = generateText({
        model: scriptedModel([callCode("await tools.slow({}); while (true) {}"), answer("never")]),
        tools: { runCode: createCodeTool({ sandbox }) },
        prompt: "wait",
        stopWhen: isStepCount(5),
        abortSignal: controller.signal,
      });
      const settled = running.then(
        () => "resolved",
        (error: unknown) => (error as Error).name,
      );
      await handlerStarted;
      const abortedAt = performance.now();
      controller.abort();
      expect(await settled).toBe("AbortError");
      expect(performance.now() - abortedAt).toBeLessThan(2_000);
      expect(handlerAborted).toBe(true);
      // The sandbox's own record of the run: cancelled, its call aborted.
      await expect.poll(() => sandbox.getAuditLog().length).toBe(1);
      expect(sandbox.getAuditLog()[0]).toMatchObject({
        success: false,
        errorCode: "SANDBOX_CANCELLED",
        toolCalls: [{ tool: "slow", status: "aborted" }],
      });
    } finally {
      await sandbox.destroy();
    }
  });

  it("a huge result is cut to maxOutputBytes with a $cut marker, and truncated says so", async () => {
    const sandbox = sandboxOf({ maxOutputSize: 50_000_000 });
    try {
      const code = "Array.from({ length: 100000 }, (_, i) => ({ i, text: 'x'.repeat(20) }))";
      const result = await generateText({
        model: scriptedModel([callCode(code), answer("big")]),
        tools: { runCode: createCodeTool({ sandbox, maxOutputBytes: 4_096 }) },
        prompt: "big",
        stopWhen: isStepCount(5),
      });
      const output = result.steps[0]?.toolResults[0]?.output as { result: unknown[]; truncated: string };
      expect(Buffer.byteLength(JSON.stringify(output))).toBeLessThanOrEqual(4_096);
      expect(output.result.slice(0, 2)).toEqual([
        { i: 0, text: "xxxxxxxxxxxxxxxxxxxx" },
        { i: 1, text: "xxxxxxxxxxxxxxxxxxxx" },
      ]);
      expect(output.result.at(-1)).toEqual({ $cut: `${100_000 - (output.result.length - 1)} more items` });
      expect(output).toEqual({
        success: true,
        result: output.result,
        logs: [],
        calls: [],
        truncated: "cut to keep the response within 4096 bytes: the result (see its $cut tags)",
      });
    } finally {
      await sandbox.destroy();
    }
  });
});

describe("createCodeTool options", () => {
  it("bad options throw SANDBOX_INVALID_OPTIONS naming the field, the value and the fix", async () => {
    const sandbox = sandboxOf();
    try {
      const thrown = (fn: () => unknown): { code: string | undefined; message: string } => {
        try {
          fn();
        } catch (error) {
          return { code: (error as { code?: string }).code, message: (error as Error).message };
        }
        throw new Error("did not throw");
      };
      expect(thrown(() => createCodeTool({ sandbox: {} as Sandbox }))).toEqual({
        code: "SANDBOX_INVALID_OPTIONS",
        message: expect.stringMatching(
          /^createCodeTool: options\.sandbox must be a sandbox from createSandbox\(\) \(got object\); pass \{ sandbox: createSandbox\(\{ engine: "isolate", tools \}\) \}/,
        ),
      });
      expect(thrown(() => createCodeTool({ sandbox, maxOutputBytes: 100 }))).toEqual({
        code: "SANDBOX_INVALID_OPTIONS",
        message: expect.stringMatching(
          /^createCodeTool: options\.maxOutputBytes must be an integer >= 1024 \(got 100\); pass a byte count such as 65536/,
        ),
      });
      expect(thrown(() => createCodeTool({ sandbox, timeout: -5 }))).toEqual({
        code: "SANDBOX_INVALID_OPTIONS",
        message: expect.stringMatching(
          /^createCodeTool: options\.timeout must be a positive integer of ms \(got -5\)/,
        ),
      });
    } finally {
      await sandbox.destroy();
    }
  });
});
