import { jsonSchema, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ApproveToolCall,
  createToolRunner,
  type ToolApprovalRequest,
  ToolCallError,
  type ToolSet,
  toolDeclarations,
} from "./index.js";

/** What a rejection carried, as plain data. */
async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolCallError);
    const { name, tool, status, message } = error as ToolCallError;
    return { name, tool, status, message };
  }
  throw new Error("the call did not fail");
}

/** The journal without durations (they depend on the clock). */
function journalOf(runner: ReturnType<typeof createToolRunner>) {
  return runner.journal().map(({ durationMs: _, ...record }) => record);
}

// Tools written for the AI SDK, with its own tool() and jsonSchema(): they must plug in unchanged.
function deleteUserTool(
  ran: string[],
  needsApproval: NonNullable<Parameters<typeof tool>[0]["needsApproval"]>,
) {
  return tool({
    description: "Delete a user account",
    inputSchema: z.object({ userId: z.string() }),
    needsApproval,
    execute: async ({ userId }: { userId: string }) => {
      ran.push(userId);
      return { deleted: userId };
    },
  });
}

describe("needsApproval (the AI SDK's)", () => {
  it("needsApproval: true with no approveToolCall hook is denied, fail closed, and the handler never runs", async () => {
    const ran: string[] = [];
    const runner = createToolRunner({ tools: { deleteUser: deleteUserTool(ran, true) } });
    expect(await failure(runner.call("deleteUser", { userId: "u1" }, "c1"))).toEqual({
      name: "ToolError",
      tool: "deleteUser",
      status: "denied",
      message:
        "tool deleteUser was denied: it needs approval (needsApproval) and no approveToolCall hook is configured; the host must pass approveToolCall to createSandbox() or execute()",
    });
    expect(ran).toEqual([]);
    expect(journalOf(runner)).toEqual([
      {
        id: "c1",
        tool: "deleteUser",
        input: { userId: "u1" },
        ok: false,
        status: "denied",
        error: {
          name: "ToolError",
          tool: "deleteUser",
          message: expect.stringContaining("no approveToolCall hook is configured"),
        },
      },
    ]);
  });

  it("needsApproval: true goes through the approveToolCall hook, which is told the call needs approval", async () => {
    const ran: string[] = [];
    const asked: Array<Omit<ToolApprovalRequest, "abortSignal">> = [];
    const approveToolCall: ApproveToolCall = ({ abortSignal: _, ...request }) => {
      asked.push(request);
      return request.input !== null && (request.input as { userId: string }).userId === "ok";
    };
    const runner = createToolRunner({
      tools: { deleteUser: deleteUserTool(ran, true) },
      approveToolCall,
    });
    expect(await runner.call("deleteUser", { userId: "ok" }, "c1")).toEqual({ deleted: "ok" });
    expect((await failure(runner.call("deleteUser", { userId: "no" }, "c2"))).status).toBe("denied");
    expect(ran).toEqual(["ok"]);
    expect(asked).toEqual([
      { tool: "deleteUser", input: { userId: "ok" }, toolCallId: "c1", needsApproval: true },
      { tool: "deleteUser", input: { userId: "no" }, toolCallId: "c2", needsApproval: true },
    ]);
  });

  it("the function form gets (input, { toolCallId, messages }) and decides per call", async () => {
    const ran: string[] = [];
    const seen: unknown[] = [];
    const runner = createToolRunner({
      tools: {
        deleteUser: deleteUserTool(ran, async (input, options) => {
          seen.push([input, options]);
          return (input as { userId: string }).userId.startsWith("admin");
        }),
      },
    });
    // Not needing approval: it runs without a hook.
    expect(await runner.call("deleteUser", { userId: "guest" }, "c1")).toEqual({ deleted: "guest" });
    // Needing approval with no hook: denied.
    expect((await failure(runner.call("deleteUser", { userId: "admin1" }, "c2"))).status).toBe("denied");
    expect(ran).toEqual(["guest"]);
    expect(seen).toEqual([
      [{ userId: "guest" }, { toolCallId: "c1", messages: [] }],
      [{ userId: "admin1" }, { toolCallId: "c2", messages: [] }],
    ]);
  });

  it("a needsApproval function that throws or returns a non-boolean denies the call, saying why", async () => {
    const ran: string[] = [];
    const runner = createToolRunner({
      tools: {
        throws: deleteUserTool(ran, () => {
          throw new Error("policy service down");
        }),
        answersString: deleteUserTool(ran, (() => "yes") as unknown as () => boolean),
      },
      approveToolCall: () => true,
    });
    expect(await failure(runner.call("throws", { userId: "u" }, "c1"))).toEqual({
      name: "ToolError",
      tool: "throws",
      status: "denied",
      message: "tool throws was denied: its needsApproval function threw: policy service down",
    });
    expect(await failure(runner.call("answersString", { userId: "u" }, "c2"))).toEqual({
      name: "ToolError",
      tool: "answersString",
      status: "denied",
      message: "tool answersString was denied: its needsApproval function returned a string, not a boolean",
    });
    expect(ran).toEqual([]);
    expect(runner.journal().map((record) => [record.status, record.error?.message])).toEqual([
      ["denied", "tool throws was denied: its needsApproval function threw: policy service down"],
      [
        "denied",
        "tool answersString was denied: its needsApproval function returned a string, not a boolean",
      ],
    ]);
  });

  it("a tool without needsApproval still asks the hooks, with needsApproval: false", async () => {
    const asked: boolean[] = [];
    const runner = createToolRunner({
      tools: { echo: tool({ inputSchema: z.string(), execute: async (s: string) => s }) },
      approveToolCall: (request) => {
        asked.push(request.needsApproval);
        return true;
      },
    });
    expect(await runner.call("echo", "hi", "c1")).toBe("hi");
    expect(asked).toEqual([false]);
  });
});

describe("the AI SDK's jsonSchema() and Standard Schemas", () => {
  const plain = {
    type: "object",
    properties: { city: { type: "string", description: "City name" } },
    required: ["city"],
    additionalProperties: false,
  } as const;

  it("jsonSchema() is declared and validated exactly like the same plain JSON Schema", async () => {
    const handled: unknown[] = [];
    const execute = async (input: unknown) => {
      handled.push(input);
      return "sunny";
    };
    const tools = {
      viaSdk: tool({ inputSchema: jsonSchema<{ city: string }>(plain), execute }),
      viaPlain: { inputSchema: plain, execute },
    };
    expect(toolDeclarations(tools).split("\n\n// Globals")[0]).toBe(
      [
        "declare const tools: {",
        "  viaSdk(input: {",
        "    /** City name */",
        "    city: string;",
        "  }): Promise<unknown>;",
        "  viaPlain(input: {",
        "    /** City name */",
        "    city: string;",
        "  }): Promise<unknown>;",
        "};",
      ].join("\n"),
    );
    const runner = createToolRunner({ tools });
    const sdk = await failure(runner.call("viaSdk", {}, "c1"));
    const json = await failure(runner.call("viaPlain", {}, "c2"));
    expect(sdk).toEqual({ ...json, tool: "viaSdk", message: json.message.replace("viaPlain", "viaSdk") });
    expect(sdk.status).toBe("invalid");
    expect(sdk.message).toContain("input.city");
    expect(await runner.call("viaSdk", { city: "Oslo" }, "c3")).toBe("sunny");
    expect(handled).toEqual([{ city: "Oslo" }]);
  });

  it("jsonSchema() with its own validate validates with it, and the handler gets what it returned", async () => {
    const handled: unknown[] = [];
    const schema = jsonSchema<{ n: number }>(
      { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
      {
        validate: (value) =>
          typeof value === "object" && value !== null && typeof (value as { n?: unknown }).n === "number"
            ? { success: true, value: { n: (value as { n: number }).n * 2 } }
            : { success: false, error: new Error("n must be a number") },
      },
    );
    const runner = createToolRunner({
      tools: {
        double: tool({
          inputSchema: schema,
          execute: async (input: { n: number }) => {
            handled.push(input);
            return input.n;
          },
        }),
      },
    });
    expect(await runner.call("double", { n: 2 }, "c1")).toBe(4);
    expect(await failure(runner.call("double", { n: "2" }, "c2"))).toEqual({
      name: "ToolError",
      tool: "double",
      status: "invalid",
      message: "tool double got an invalid input: input: n must be a number",
    });
    expect(handled).toEqual([{ n: 4 }]);
  });

  it("a Standard Schema of another library validates with ~standard.validate; declared from ~standard.jsonSchema, else unknown", async () => {
    const handled: unknown[] = [];
    // A Standard Schema v1 as another library (valibot, arktype …) makes one: not zod.
    const standard = (withJsonSchema: boolean) => ({
      "~standard": {
        version: 1 as const,
        vendor: "example",
        validate: (value: unknown) =>
          typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string"
            ? { value }
            : { issues: [{ message: "expected a string", path: [{ key: "id" }] }] },
        ...(withJsonSchema
          ? {
              jsonSchema: {
                input: () => ({ type: "object", properties: { id: { type: "string" } }, required: ["id"] }),
                output: () => ({}),
              },
            }
          : {}),
      },
    });
    const execute = async (input: unknown) => {
      handled.push(input);
      return true;
    };
    // No cast: a Standard Schema is a ToolSchema.
    const tools: ToolSet = {
      typed: { inputSchema: standard(true), execute },
      untyped: { inputSchema: standard(false), execute },
    };
    expect(toolDeclarations(tools).split("\n\n// Globals")[0]).toBe(
      [
        "declare const tools: {",
        "  typed(input: { id: string }): Promise<unknown>;",
        "  untyped(input?: unknown): Promise<unknown>;",
        "};",
      ].join("\n"),
    );
    const runner = createToolRunner({ tools });
    expect(await failure(runner.call("untyped", { id: 1 }, "c1"))).toEqual({
      name: "ToolError",
      tool: "untyped",
      status: "invalid",
      message: "tool untyped got an invalid input: input.id: expected a string",
    });
    expect(await runner.call("typed", { id: "a" }, "c2")).toBe(true);
    expect(handled).toEqual([{ id: "a" }]);
  });
});

describe("an async-generator execute (the AI SDK's preliminary results)", () => {
  it("the guest gets the last value yielded, and the journal records it", async () => {
    const runner = createToolRunner({
      tools: {
        build: tool({
          inputSchema: z.object({}),
          async *execute() {
            yield { status: "loading" };
            yield { done: true };
          },
        }),
      },
    });
    expect(await runner.call("build", {}, "c1")).toEqual({ done: true });
    expect(journalOf(runner)).toEqual([
      { id: "c1", tool: "build", input: {}, output: { done: true }, ok: true, status: "ok" },
    ]);
  });

  it("an abort stops the iteration: the generator's finally runs and it yields no more", async () => {
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const runner = createToolRunner({
      tools: {
        stream: tool({
          inputSchema: z.object({}),
          async *execute() {
            try {
              events.push("first");
              yield 1;
              await gate;
              events.push("second");
              yield 2;
              events.push("third");
              yield 3;
            } finally {
              events.push("finally");
            }
          },
        }),
      },
    });
    const call = runner.call("stream", {}, "c1");
    await new Promise((resolve) => setTimeout(resolve, 5));
    runner.abortAll("stop");
    expect((await failure(call)).status).toBe("aborted");
    release();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(events).toEqual(["first", "second", "finally"]);
  });
});

describe("AI SDK tool() objects type-check and run as they are", () => {
  it("a function description is asked once with { context: undefined } and execute sees context undefined", async () => {
    const seen: unknown[] = [];
    const tools = {
      search: tool({
        description: ({ context }) => `Search the catalogue (context: ${String(context)})`,
        inputSchema: z.object({ q: z.string() }),
        execute: async ({ q }, { context, messages, abortSignal }) => {
          seen.push({ context, messages, aborted: abortSignal?.aborted });
          return q.toUpperCase();
        },
      }),
    };
    expect(toolDeclarations(tools).split("\n").slice(0, 4)).toEqual([
      "declare const tools: {",
      "  /** Search the catalogue (context: undefined) */",
      "  search(input: { q: string }): Promise<unknown>;",
      "};",
    ]);
    const runner = createToolRunner({ tools });
    expect(await runner.call("search", { q: "lamp" }, "c1")).toBe("LAMP");
    expect(seen).toEqual([{ context: undefined, messages: [], aborted: false }]);
  });

  it("a description function that throws or returns no string is a coded config error naming the field", () => {
    const withDescription = (description: unknown) => ({
      t: { description, inputSchema: { type: "object" }, execute: () => 1 },
    });
    expect(() => createToolRunner({ tools: withDescription(() => 42) as never })).toThrow(
      "Invalid execution options: options.tools.t.description: the description function must return a string (got a number)",
    );
    expect(() =>
      createToolRunner({
        tools: withDescription(({ context }: { context: { user: string } }) => context.user) as never,
      }),
    ).toThrow(
      "options.tools.t.description: the description function threw when called with { context: undefined } (Cannot read properties of undefined (reading 'user')); a sandboxed call has no AI SDK context",
    );
  });
});
