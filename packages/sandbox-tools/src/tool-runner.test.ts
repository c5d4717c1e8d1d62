import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { HostCalls } from "@suaveplan/sandbox-core/types";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ApproveToolCall,
  createToolRunner,
  normaliseTools,
  TOOL_INPUT_TOO_LARGE,
  ToolCallError,
  type ToolExecutionOptions,
  type ToolRunnerOptions,
  type ToolSet,
} from "./index.js";

/** A clock the test moves by hand, so every `durationMs` is exact. */
function manualClock() {
  let now = 1_000;
  return {
    clock: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

/** A promise and the functions that settle it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** What a rejection carried, as plain data. */
async function failure(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolCallError);
    const { name, tool, status, message, stack } = error as ToolCallError;
    return { name, tool, status, message, stack };
  }
  throw new Error("the call did not fail");
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function weather(execute: ToolSet[string]["execute"]): ToolSet {
  return {
    getWeather: {
      description: "Current weather for a city",
      inputSchema: z.object({ city: z.string(), units: z.enum(["C", "F"]).default("C") }),
      outputSchema: z.object({ tempC: z.number() }),
      execute,
    },
  };
}

function runner(tools: ToolSet, options: Omit<ToolRunnerOptions, "tools"> = {}) {
  const time = manualClock();
  return { time, run: createToolRunner({ tools: normaliseTools(tools), clock: time.clock, ...options }) };
}

describe("a successful call", () => {
  it("validates, runs the handler with the parsed input and journals the whole call", async () => {
    const seen: Array<{ input: unknown; toolCallId: string; aborted: boolean; messages: unknown }> = [];
    const { time, run } = runner(
      weather(async (input: { city: string }, options: ToolExecutionOptions) => {
        seen.push({
          input,
          toolCallId: options.toolCallId,
          aborted: options.abortSignal.aborted,
          messages: options.messages,
        });
        time.advance(7);
        return { tempC: 21, extra: "dropped by the output schema" };
      }),
    );
    await expect(run.call("getWeather", { city: "Paris" }, "1")).resolves.toEqual({ tempC: 21 });
    expect(seen).toEqual([
      { input: { city: "Paris", units: "C" }, toolCallId: "1", aborted: false, messages: [] },
    ]);
    expect(run.journal()).toEqual([
      {
        id: "1",
        tool: "getWeather",
        input: { city: "Paris" },
        output: { tempC: 21 },
        ok: true,
        status: "ok",
        durationMs: 7,
      },
    ]);
    // The default measure: UTF-8 bytes of the codec text, `["o",[["city","Paris"]]]` and `["o",[["tempC",21]]]`.
    expect(run.usage()).toEqual({
      calls: 1,
      inputBytes: '["o",[["city","Paris"]]]'.length,
      outputBytes: '["o",[["tempC",21]]]'.length,
    });
  });

  it("offers the tool names and its payload limits in the shape engines take as hostCalls", () => {
    const run = createToolRunner({ tools: weather(() => ({ tempC: 1 })), maxToolPayloadBytes: 4096 });
    const hostCalls: HostCalls = run;
    expect({
      names: hostCalls.names,
      maxCallBytes: run.maxCallBytes,
      maxReplyBytes: run.maxReplyBytes,
    }).toEqual({
      names: ["getWeather"],
      // The transport's bound in the codec's unit (UTF-16 code units × 2): any text of at most
      // 4096 UTF-8 bytes fits, and the runner's exact UTF-8 check decides.
      maxCallBytes: 8192,
      maxReplyBytes: 8192,
    });
  });

  it("journals a pending call as pending, with the time it has taken so far", async () => {
    const answer = deferred<{ tempC: number }>();
    const { time, run } = runner(weather(() => answer.promise));
    const call = run.call("getWeather", { city: "Oslo" }, "a");
    await flush();
    time.advance(3);
    expect(run.journal()).toEqual([
      { id: "a", tool: "getWeather", input: { city: "Oslo" }, ok: false, status: "pending", durationMs: 3 },
    ]);
    answer.resolve({ tempC: -4 });
    await expect(call).resolves.toEqual({ tempC: -4 });
  });
});

describe("input validation", () => {
  it("rejects a bad input naming the field, without calling the handler", async () => {
    let called = 0;
    const { run } = runner(
      weather(() => {
        called++;
        return { tempC: 1 };
      }),
    );
    expect(await failure(run.call("getWeather", { city: 42 }, "1"))).toEqual({
      name: "ToolError",
      tool: "getWeather",
      status: "invalid",
      message: "tool getWeather got an invalid input: input.city: expected string, received number",
      stack: "ToolError: tool getWeather got an invalid input: input.city: expected string, received number",
    });
    expect(called).toBe(0);
    expect(run.journal()).toEqual([
      {
        id: "1",
        tool: "getWeather",
        input: { city: 42 },
        error: {
          name: "ToolError",
          tool: "getWeather",
          message: "tool getWeather got an invalid input: input.city: expected string, received number",
        },
        ok: false,
        status: "invalid",
        durationMs: 0,
      },
    ]);
  });

  it("names every field, nested and indexed, and counts what it does not show", async () => {
    const { run } = runner({
      plan: {
        inputSchema: z.object({
          stops: z.array(z.object({ city: z.string(), days: z.number().int().min(1) })),
          mode: z.union([z.string(), z.null()]),
          a: z.string(),
          b: z.string(),
        }),
        execute: () => "planned",
      },
    });
    const input = {
      stops: [
        { city: "Rome", days: 0 },
        { city: 1, days: 2 },
      ],
      mode: 3,
    };
    expect((await failure(run.call("plan", input, "1"))).message).toBe(
      "tool plan got an invalid input: input.stops[0].days: Too small: expected number to be >=1; input.stops[1].city: expected string, received number; input.mode: expected string | null, received number; and 2 more",
    );
  });

  /** The same tool, once with a zod schema and once with the JSON Schema a user would write by hand. */
  const zodTool = z.object({
    city: z.string().min(2),
    days: z.number().int().min(1).max(14),
    units: z.enum(["C", "F"]),
    tags: z.array(z.string()).max(2),
    note: z.string().nullable(),
  });
  const jsonTool = {
    type: "object",
    properties: {
      city: { type: "string", minLength: 2 },
      days: { type: "integer", minimum: 1, maximum: 14 },
      units: { type: "string", enum: ["C", "F"] },
      tags: { type: "array", items: { type: "string" }, maxItems: 2 },
      note: { type: ["string", "null"] },
    },
    required: ["city", "days", "units", "tags", "note"],
  };
  const good = { city: "Paris", days: 3, units: "C", tags: ["x"], note: null };
  const cases: Array<[string, unknown]> = [
    ["a valid input", good],
    ["a number for a string", { ...good, city: 7 }],
    ["a string too short", { ...good, city: "P" }],
    ["a fraction for an integer", { ...good, days: 1.5 }],
    ["a number above the maximum", { ...good, days: 15 }],
    ["a value outside the enum", { ...good, units: "K" }],
    ["too many items", { ...good, tags: ["a", "b", "c"] }],
    ["a wrong item", { ...good, tags: [1] }],
    ["a missing field", { city: "Paris", days: 3, units: "C", tags: [] }],
    ["not an object", "Paris"],
    ["nothing", undefined],
  ];

  it.each(cases)("gives a zod schema and its JSON Schema the same outcome for %s", async (_, input) => {
    const outcome = async (inputSchema: ToolSet[string]["inputSchema"]) => {
      const { run } = runner({ book: { inputSchema, execute: (value: unknown) => value } });
      try {
        return { ok: true, value: await run.call("book", input, "1") };
      } catch (error) {
        return { ok: false, status: (error as ToolCallError).status };
      }
    };
    const fromZod = await outcome(zodTool);
    expect(await outcome(jsonTool)).toEqual(fromZod);
    expect(fromZod).toEqual(input === good ? { ok: true, value: good } : { ok: false, status: "invalid" });
  });

  it("gives both kinds the same messages, but for a nullable field zod reports as its inner type", async () => {
    const messages = async (inputSchema: ToolSet[string]["inputSchema"]) => {
      const { run } = runner({ book: { inputSchema, execute: () => 1 } });
      const out: string[] = [];
      for (const [, input] of cases.slice(1))
        out.push((await failure(run.call("book", input, String(out.length)))).message);
      return out;
    };
    const fromZod = await messages(zodTool);
    expect(fromZod).toEqual([
      "tool book got an invalid input: input.city: expected string, received number",
      "tool book got an invalid input: input.city: Too small: expected string to have >=2 characters",
      "tool book got an invalid input: input.days: expected int, received number",
      "tool book got an invalid input: input.days: Too big: expected number to be <=14",
      'tool book got an invalid input: input.units: expected one of "C"|"F"',
      "tool book got an invalid input: input.tags: Too big: expected array to have <=2 items",
      "tool book got an invalid input: input.tags[0]: expected string, received number",
      "tool book got an invalid input: input.note: expected string, received undefined",
      "tool book got an invalid input: input: expected object, received string",
      "tool book got an invalid input: input: expected object, received undefined",
    ]);
    // `type: ["string", "null"]` becomes a zod union, which names both types.
    expect(await messages(jsonTool)).toEqual(
      fromZod.map((m) => m.replace("input.note: expected string,", "input.note: expected string | null,")),
    );
  });
});

describe("approval", () => {
  it("needs every hook to approve, asks with the parsed input, and never runs a denied call", async () => {
    const asked: unknown[] = [];
    const sandboxLevel: ApproveToolCall = (call) => {
      asked.push({ hook: "sandbox", tool: call.tool, input: call.input, id: call.toolCallId });
      return true;
    };
    const perExecution: ApproveToolCall = async (call) => {
      asked.push({ hook: "execution", tool: call.tool, input: call.input, id: call.toolCallId });
      return (call.input as { city: string }).city !== "Atlantis";
    };
    let called = 0;
    const { run } = runner(
      weather(() => {
        called++;
        return { tempC: 1 };
      }),
      { approveToolCall: [sandboxLevel, undefined, perExecution] },
    );
    await expect(run.call("getWeather", { city: "Paris" }, "1")).resolves.toEqual({ tempC: 1 });
    expect(await failure(run.call("getWeather", { city: "Atlantis" }, "2"))).toEqual({
      name: "ToolError",
      tool: "getWeather",
      status: "denied",
      message: "tool getWeather was denied",
      stack: "ToolError: tool getWeather was denied",
    });
    expect(called).toBe(1);
    expect(asked).toEqual([
      { hook: "sandbox", tool: "getWeather", input: { city: "Paris", units: "C" }, id: "1" },
      { hook: "execution", tool: "getWeather", input: { city: "Paris", units: "C" }, id: "1" },
      { hook: "sandbox", tool: "getWeather", input: { city: "Atlantis", units: "C" }, id: "2" },
      { hook: "execution", tool: "getWeather", input: { city: "Atlantis", units: "C" }, id: "2" },
    ]);
    expect(run.journal().map((r) => ({ id: r.id, status: r.status, error: r.error }))).toEqual([
      { id: "1", status: "ok", error: undefined },
      {
        id: "2",
        status: "denied",
        error: { name: "ToolError", tool: "getWeather", message: "tool getWeather was denied" },
      },
    ]);
  });

  it("stops at the first hook that says no; a throw, a rejection or a truthy non-true value deny", async () => {
    let later = 0;
    const hooks: ApproveToolCall[] = [
      () => {
        throw new Error("the approval service is down");
      },
      () => Promise.reject(new Error("no")),
      () => "yes" as unknown as boolean,
      () => 1 as unknown as boolean,
    ];
    for (const hook of hooks) {
      const { run } = runner(
        weather(() => ({ tempC: 1 })),
        {
          approveToolCall: [
            hook,
            () => {
              later++;
              return true;
            },
          ],
        },
      );
      expect(await failure(run.call("getWeather", { city: "Paris" }, "1"))).toMatchObject({
        status: "denied",
        message: "tool getWeather was denied",
      });
    }
    expect(later).toBe(0);
  });

  it("does not ask about an invalid input", async () => {
    let asked = 0;
    const { run } = runner(
      weather(() => ({ tempC: 1 })),
      {
        approveToolCall: () => {
          asked++;
          return true;
        },
      },
    );
    expect((await failure(run.call("getWeather", {}, "1"))).status).toBe("invalid");
    expect(asked).toBe(0);
  });
});

describe("handler failures and outputs", () => {
  it("passes a thrown error's message through as it is, never its stack", async () => {
    const { run } = runner(
      weather(() => {
        throw new RangeError("upstream answered 503");
      }),
    );
    expect(await failure(run.call("getWeather", { city: "Paris" }, "1"))).toEqual({
      name: "ToolError",
      tool: "getWeather",
      status: "error",
      message: "upstream answered 503",
      stack: "ToolError: upstream answered 503",
    });
    expect(run.journal()[0]).toEqual({
      id: "1",
      tool: "getWeather",
      input: { city: "Paris" },
      error: { name: "ToolError", tool: "getWeather", message: "upstream answered 503" },
      ok: false,
      status: "error",
      durationMs: 0,
    });
  });

  it("uses a thrown string, and says the tool failed for anything without a message", async () => {
    const thrown: unknown[] = ["plain text", { code: 7 }, new Error(""), null];
    const messages: string[] = [];
    for (const value of thrown) {
      const { run } = runner(weather(() => Promise.reject(value)));
      messages.push((await failure(run.call("getWeather", { city: "Paris" }, "1"))).message);
    }
    expect(messages).toEqual([
      "plain text",
      "tool getWeather failed",
      "tool getWeather failed",
      "tool getWeather failed",
    ]);
  });

  it("cuts a message longer than a payload may be", async () => {
    const { run } = runner(
      weather(() => {
        throw new Error("x".repeat(100));
      }),
      { maxToolPayloadBytes: 40 },
    );
    expect((await failure(run.call("getWeather", { city: "P" }, "1"))).message).toBe(`${"x".repeat(19)}…`);
  });

  it("checks the output against outputSchema", async () => {
    const { run } = runner(weather(() => ({ tempC: "warm" })));
    expect(await failure(run.call("getWeather", { city: "Paris" }, "1"))).toMatchObject({
      status: "invalid-output",
      message: "tool getWeather returned an invalid output: output.tempC: expected number, received string",
    });
    expect(run.journal()[0]).toMatchObject({ status: "invalid-output", ok: false });
    expect(run.journal()[0]).not.toHaveProperty("output");
  });

  it("returns any output of a tool without outputSchema, undefined included", async () => {
    const { run } = runner({
      ping: { inputSchema: {}, execute: () => undefined },
      when: { inputSchema: {}, execute: () => new Date(0) },
    });
    await expect(run.call("ping", undefined, "1")).resolves.toBeUndefined();
    await expect(run.call("when", null, "2")).resolves.toEqual(new Date(0));
    expect(run.journal().map((r) => r.status)).toEqual(["ok", "ok"]);
  });
});

describe("limits", () => {
  it("refuses calls past maxToolCalls, journals the first refusal and only counts later ones", async () => {
    let called = 0;
    const { run } = runner(
      weather(() => {
        called++;
        return { tempC: 1 };
      }),
      { maxToolCalls: 2 },
    );
    await run.call("getWeather", { city: "A" }, "1");
    await expect(run.call("nope", {}, "2")).rejects.toThrow("there is no tool named");
    const refusal = {
      name: "ToolError",
      tool: "getWeather",
      status: "limit",
      message: "tool getWeather was refused: an execution may make 2 tool calls (maxToolCalls)",
      stack: "ToolError: tool getWeather was refused: an execution may make 2 tool calls (maxToolCalls)",
    };
    expect(await failure(run.call("getWeather", { city: "C" }, "3"))).toEqual(refusal);
    expect(await failure(run.call("getWeather", { city: "D" }, "4"))).toEqual(refusal);
    expect(called).toBe(1);
    expect(run.journal().map((r) => [r.id, r.status])).toEqual([
      ["1", "ok"],
      ["2", "refused"],
      ["3", "limit"],
    ]);
    expect(run.usage().calls).toBe(4);
  });

  it("with maxToolCalls 0 refuses every call", async () => {
    const { run } = runner(
      weather(() => ({ tempC: 1 })),
      { maxToolCalls: 0 },
    );
    expect((await failure(run.call("getWeather", { city: "A" }, "1"))).status).toBe("limit");
  });

  it("runs at most maxConcurrentToolCalls handlers at once; the rest wait in call order and all answer", async () => {
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const { run } = runner(
      {
        echo: {
          inputSchema: z.number(),
          execute: async (n: number) => {
            started.push(n);
            running++;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, 2));
            running--;
            return n * 2;
          },
        },
      },
      { maxConcurrentToolCalls: 3 },
    );
    const inputs = Array.from({ length: 20 }, (_, i) => i);
    const answers = await Promise.all(inputs.map((n) => run.call("echo", n, String(n))));
    expect(answers).toEqual(inputs.map((n) => n * 2));
    expect(most).toBe(3);
    expect(started).toEqual(inputs);
    expect(run.journal().every((r) => r.status === "ok")).toBe(true);
  });

  it("lets 100 concurrent calls of one execution complete with the default limits", async () => {
    const { run } = runner({
      echo: { inputSchema: z.string(), execute: async (s: string) => s.toUpperCase() },
    });
    const inputs = Array.from({ length: 100 }, (_, i) => `v${i}`);
    const answers = await Promise.all(inputs.map((s, i) => run.call("echo", s, String(i))));
    expect(answers).toEqual(inputs.map((s) => s.toUpperCase()));
  });

  it("refuses an input over maxToolPayloadBytes before validating it, and does not keep it", async () => {
    let called = 0;
    const { run } = runner(
      weather(() => {
        called++;
        return { tempC: 1 };
      }),
      { maxToolPayloadBytes: 64 },
    );
    expect(await failure(run.call("getWeather", { city: "x".repeat(60) }, "1"))).toMatchObject({
      status: "limit",
      message: "tool getWeather was refused: its input is larger than 64 bytes (maxToolPayloadBytes)",
    });
    expect(called).toBe(0);
    expect(run.journal()[0]).toMatchObject({ input: undefined, status: "limit" });
    expect(run.usage()).toEqual({ calls: 1, inputBytes: 0, outputBytes: 0 });
  });

  it("refuses an output over maxToolPayloadBytes", async () => {
    const { run } = runner(
      { big: { inputSchema: {}, execute: () => "y".repeat(100) } },
      { maxToolPayloadBytes: 64 },
    );
    expect(await failure(run.call("big", {}, "1"))).toMatchObject({
      status: "limit",
      message: "tool big returned an output larger than 64 bytes (maxToolPayloadBytes)",
    });
  });

  it("measures with the given measure; a throw means the value cannot cross", async () => {
    const measured: unknown[] = [];
    const measure = (value: unknown) => {
      measured.push(value);
      if (typeof value === "function") throw new TypeError("output: a function cannot cross");
      return 10;
    };
    const { run } = runner(
      { fn: { inputSchema: {}, execute: () => () => 1 }, ok: { inputSchema: {}, execute: () => "fine" } },
      { measure },
    );
    expect(await failure(run.call("fn", { a: 1 }, "1"))).toMatchObject({
      status: "invalid-output",
      message:
        "tool fn returned an output that cannot be sent into the sandbox: output: a function cannot cross",
    });
    await expect(run.call("ok", "in", "2")).resolves.toBe("fine");
    expect(measured.map((v) => typeof v)).toEqual(["object", "function", "string", "string"]);
    expect(run.usage()).toEqual({ calls: 2, inputBytes: 20, outputBytes: 10 });
  });

  it("measures sizes by default as the UTF-8 bytes of the codec text, BigInt, Map, Set, bytes, cycles and non-ASCII included", async () => {
    const sizes: number[] = [];
    const { run } = runner(
      {
        size: {
          inputSchema: {},
          execute: () => "",
        },
      },
      {
        maxToolPayloadBytes: 1_000,
        approveToolCall: () => true,
      },
    );
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    const inputs = [
      "abcd",
      "é😀\n",
      { a: "x" },
      [1, 2, 3],
      10n ** 30n,
      new Map([["k", "v"]]),
      new Set([1]),
      new Uint8Array(800),
      cyclic,
      [undefined, null, true, -0, Number.NaN],
    ];
    for (const [i, input] of inputs.entries()) {
      await run.call("size", input, String(i)).catch(() => undefined);
      const after = run.usage().inputBytes;
      sizes.push(after - sizes.reduce((a, b) => a + b, 0));
    }
    const utf8 = (text: string) => Buffer.byteLength(text, "utf8");
    expect(sizes).toEqual([
      utf8('"abcd"'),
      utf8('"é😀\\n"'),
      utf8('["o",[["a","x"]]]'),
      utf8('["a",[1,2,3]]'),
      utf8(`["b","${10n ** 30n}"]`),
      utf8('["M",[["k","v"]]]'),
      utf8('["S",[1]]'),
      0, // 800 bytes are 1068 characters of base64: over the limit
      utf8('["o",[["a",1],["self",["r",0]]]]'),
      utf8('["a",[["u"],null,true,["n","-0"],["n","NaN"]]]'),
    ]);
    expect(run.journal()[7]).toMatchObject({ status: "limit", input: undefined });
  });

  it("a guest input too large to send (TOOL_INPUT_TOO_LARGE) is refused naming the tool and journaled as limit", async () => {
    let called = 0;
    const { run } = runner(
      weather(() => {
        called++;
        return { tempC: 1 };
      }),
      { maxToolPayloadBytes: 64 },
    );
    expect(await failure(run.call("getWeather", TOOL_INPUT_TOO_LARGE, "1"))).toMatchObject({
      status: "limit",
      message: "tool getWeather was refused: its input is larger than 64 bytes (maxToolPayloadBytes)",
    });
    expect(called).toBe(0);
    expect(run.journal()).toEqual([
      {
        id: "1",
        tool: "getWeather",
        input: undefined,
        ok: false,
        status: "limit",
        durationMs: 0,
        error: {
          name: "ToolError",
          tool: "getWeather",
          message: "tool getWeather was refused: its input is larger than 64 bytes (maxToolPayloadBytes)",
        },
      },
    ]);
  });

  it("counts a byte as the docs say: a 20,000-row result of 0.36 MB JSON passes the 1 MiB default", async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, ok: i % 2 === 0 }));
    const json = Buffer.byteLength(JSON.stringify(rows));
    expect(json).toBeGreaterThan(360_000);
    const run = createToolRunner({ tools: { list: { inputSchema: {}, execute: () => rows } } });
    expect(await run.call("list", {}, "1")).toBe(rows);
    expect(run.journal()[0]?.status).toBe("ok");
  });

  it("is precise to the byte: limit = default + 4 KiB lets default + 1 KiB through both ways and refuses limit + 1 KiB", async () => {
    const limit = 1024 * 1024 + 4096;
    const run = createToolRunner({
      tools: { echo: { inputSchema: {}, execute: (input: unknown) => input } },
      maxToolPayloadBytes: limit,
    });
    const fits = "x".repeat(1024 * 1024 + 1024);
    expect(await run.call("echo", fits, "1")).toBe(fits);
    // A string's codec text is itself in quotes: exactly the limit passes, one byte more does not.
    const exact = "x".repeat(limit - 2);
    expect(await run.call("echo", exact, "2")).toBe(exact);
    expect((await failure(run.call("echo", `${exact}x`, "3"))).status).toBe("limit");
    expect((await failure(run.call("echo", "x".repeat(limit + 1024), "4"))).status).toBe("limit");
  });
});

describe("the end of an execution", () => {
  it("abortAll aborts each pending call's signal, rejects it now and drops its late answer", async () => {
    const late = deferred<{ tempC: number }>();
    const signals: AbortSignal[] = [];
    const { run } = runner(
      weather((_: unknown, { abortSignal }: ToolExecutionOptions) => {
        signals.push(abortSignal);
        return late.promise;
      }),
    );
    const call = run.call("getWeather", { city: "Paris" }, "1");
    await flush();
    const reason = new Error("the execution timed out");
    run.abortAll(reason);
    expect(signals.map((s) => [s.aborted, s.reason])).toEqual([[true, reason]]);
    expect(await failure(call)).toMatchObject({
      status: "aborted",
      message: "tool getWeather was aborted: the execution timed out",
    });
    late.resolve({ tempC: 30 });
    await flush();
    expect(run.journal()).toEqual([
      {
        id: "1",
        tool: "getWeather",
        input: { city: "Paris" },
        error: {
          name: "ToolError",
          tool: "getWeather",
          message: "tool getWeather was aborted: the execution timed out",
        },
        ok: false,
        status: "aborted",
        durationMs: 0,
      },
    ]);
  });

  it("never runs a call that was waiting for a slot or an approval when it was aborted", async () => {
    const gate = deferred<boolean>();
    const running = deferred<never>();
    let started = 0;
    const { run } = runner(
      {
        slow: {
          inputSchema: z.string(),
          execute: () => {
            started++;
            return running.promise;
          },
        },
      },
      {
        maxConcurrentToolCalls: 1,
        approveToolCall: (call) => (call.input === "needs a human" ? gate.promise : true),
      },
    );
    const first = run.call("slow", "a", "1");
    const queued = run.call("slow", "b", "2");
    const approving = run.call("slow", "needs a human", "3");
    await flush();
    expect(started).toBe(1);
    run.abortAll();
    gate.resolve(true);
    running.reject(new Error("too late"));
    const statuses = await Promise.all(
      [first, queued, approving].map(async (p) => (await failure(p)).message),
    );
    await flush();
    expect(statuses).toEqual([
      "tool slow was aborted: the execution ended",
      "tool slow was aborted: the execution ended",
      "tool slow was aborted: the execution ended",
    ]);
    expect(started).toBe(1);
    expect(run.journal().map((r) => r.status)).toEqual(["aborted", "aborted", "aborted"]);
  });

  it("close() aborts what is pending and refuses every later call", async () => {
    const never = deferred<never>();
    const { run } = runner(weather(() => never.promise));
    const pending = run.call("getWeather", { city: "Paris" }, "1");
    await flush();
    run.close();
    run.close();
    expect((await failure(pending)).status).toBe("aborted");
    expect(await failure(run.call("getWeather", { city: "Rome" }, "2"))).toEqual({
      name: "ToolError",
      tool: "getWeather",
      status: "refused",
      message: "tool getWeather was refused: the execution has ended",
      stack: "ToolError: tool getWeather was refused: the execution has ended",
    });
    expect(run.journal().map((r) => [r.id, r.status, r.input])).toEqual([
      ["1", "aborted", { city: "Paris" }],
      ["2", "refused", { city: "Rome" }],
    ]);
  });

  it("is disposable: leaving a using block closes it", async () => {
    let kept: ReturnType<typeof createToolRunner> | undefined;
    {
      using run = createToolRunner({ tools: weather(() => ({ tempC: 1 })) });
      kept = run;
    }
    expect((await failure(kept.call("getWeather", { city: "Paris" }, "1"))).status).toBe("refused");
  });

  it("follows the execution's signal: aborting it aborts pending calls and refuses later ones", async () => {
    const controller = new AbortController();
    const { run } = runner(
      weather(() => new Promise(() => {})),
      { signal: controller.signal },
    );
    const pending = run.call("getWeather", { city: "Paris" }, "1");
    await flush();
    controller.abort(new Error("cancelled by the user"));
    expect((await failure(pending)).message).toBe("tool getWeather was aborted: cancelled by the user");
    expect((await failure(run.call("getWeather", { city: "Rome" }, "2"))).status).toBe("refused");
  });

  it("refuses every call when the execution's signal was aborted already", async () => {
    const { run } = runner(
      weather(() => ({ tempC: 1 })),
      { signal: AbortSignal.abort() },
    );
    expect((await failure(run.call("getWeather", { city: "Paris" }, "1"))).status).toBe("refused");
  });
});

describe("refusals", () => {
  it("refuses a name that is no tool, and a call id used twice", async () => {
    const never = deferred<never>();
    const { run } = runner(weather(() => never.promise));
    expect(await failure(run.call("constructor", {}, "1"))).toEqual({
      name: "ToolError",
      tool: "constructor",
      status: "refused",
      message: 'there is no tool named "constructor"',
      stack: 'ToolError: there is no tool named "constructor"',
    });
    void run.call("getWeather", { city: "Paris" }, "2").catch(() => undefined);
    expect((await failure(run.call("getWeather", { city: "Rome" }, "2"))).message).toBe(
      "tool getWeather was refused: call id 2 is already in use",
    );
    run.close();
  });
});

describe("options for a long-lived host", () => {
  it("gate ends a call before the tool is looked up, journaled with its input; undefined lets it go on", async () => {
    const asked: string[] = [];
    let called = 0;
    const { run } = runner(
      weather(() => {
        called++;
        return { tempC: 1 };
      }),
      {
        gate: (tool) => {
          asked.push(tool);
          if (tool === "getWeather") return undefined;
          return tool === "secret"
            ? { status: "denied", message: `tool ${tool} was denied by policy` }
            : { status: "refused", message: `tool ${tool} was refused: closed` };
        },
      },
    );
    expect(await failure(run.call("secret", { a: 1 }, "1"))).toEqual({
      name: "ToolError",
      tool: "secret",
      status: "denied",
      message: "tool secret was denied by policy",
      stack: "ToolError: tool secret was denied by policy",
    });
    expect((await failure(run.call("other", {}, "2"))).status).toBe("refused");
    await expect(run.call("getWeather", { city: "Paris" }, "3")).resolves.toEqual({ tempC: 1 });
    expect(asked).toEqual(["secret", "other", "getWeather"]);
    expect(called).toBe(1);
    expect(run.journal().map(({ id, status, input }) => ({ id, status, input }))).toEqual([
      { id: "1", status: "denied", input: { a: 1 } },
      { id: "2", status: "refused", input: {} },
      { id: "3", status: "ok", input: { city: "Paris" } },
    ]);
  });

  it("gate that throws refuses the call rather than running it", async () => {
    const { run } = runner(
      weather(() => ({ tempC: 1 })),
      {
        gate: () => {
          throw new Error("policy store down");
        },
      },
    );
    expect((await failure(run.call("getWeather", { city: "Paris" }, "1"))).message).toBe(
      "tool getWeather was refused: its gate failed",
    );
  });

  it("maxJournal keeps the last calls only, and frees the dropped calls' ids", async () => {
    const { run } = runner(
      weather(() => ({ tempC: 1 })),
      { maxJournal: 2 },
    );
    for (const id of ["1", "2", "3"]) await run.call("getWeather", { city: id }, id);
    expect(run.journal().map((call) => call.id)).toEqual(["2", "3"]);
    await expect(run.call("getWeather", { city: "again" }, "1")).resolves.toEqual({ tempC: 1 });
    expect(run.usage().calls).toBe(4);
  });

  it("maxMessageChars cuts a handler's message; noApproverHint ends a needsApproval denial", async () => {
    const { run } = runner(
      {
        loud: {
          inputSchema: z.object({}),
          execute: () => {
            throw new Error("x".repeat(50));
          },
        },
        guarded: { inputSchema: z.object({}), needsApproval: true, execute: () => 1 },
      },
      { maxMessageChars: 10, noApproverHint: "this host cannot ask" },
    );
    expect((await failure(run.call("loud", {}, "1"))).message).toBe(`${"x".repeat(9)}…`);
    expect((await failure(run.call("guarded", {}, "2"))).message).toBe(
      "tool guarded was denied: it needs approval (needsApproval) and this host cannot ask",
    );
  });

  it("abortAll(reason, why) aborts with reason and says why", async () => {
    const never = deferred<never>();
    const signals: AbortSignal[] = [];
    const { run } = runner(
      weather((_: unknown, { abortSignal }: ToolExecutionOptions) => {
        signals.push(abortSignal);
        return never.promise;
      }),
    );
    const call = run.call("getWeather", { city: "Paris" }, "1");
    await flush();
    const reason = new Error("disposed (CODE); see the docs");
    run.abortAll(reason, "the host was disposed");
    expect(signals[0]?.reason).toBe(reason);
    expect((await failure(call)).message).toBe("tool getWeather was aborted: the host was disposed");
  });
});

describe("options", () => {
  it.each([
    [
      { maxToolCalls: -1 },
      "Invalid execution options: options.maxToolCalls: Too small: expected number to be >=0 (got -1)",
    ],
    [
      { maxConcurrentToolCalls: 1.5 },
      "Invalid execution options: options.maxConcurrentToolCalls: Invalid input: expected int, received number (got 1.5)",
    ],
    [
      { maxToolPayloadBytes: "1MB" },
      'Invalid execution options: options.maxToolPayloadBytes: Invalid input: expected number, received string (got "1MB")',
    ],
    [
      { approveToolCall: "yes" },
      "Invalid execution options: options.approveToolCall: must be a function or an array of functions",
    ],
    [
      { approveToolCall: [() => true, 1] },
      "Invalid execution options: options.approveToolCall: must be a function or an array of functions",
    ],
    [{ measure: 5 }, "Invalid execution options: options.measure: must be a function (value) => bytes"],
    [{ signal: {} }, "Invalid execution options: options.signal: must be an AbortSignal"],
    [
      { gate: true },
      "Invalid execution options: options.gate: must be a function (tool) => refusal or undefined",
    ],
    [
      { maxJournal: -1 },
      "Invalid execution options: options.maxJournal: must be an integer of at least 0, got -1",
    ],
    [
      { maxMessageChars: 1 },
      "Invalid execution options: options.maxMessageChars: must be an integer of at least 2, got 1",
    ],
    [{ noApproverHint: 5 }, "Invalid execution options: options.noApproverHint: must be a string"],
  ])("refuses %j with SANDBOX_INVALID_OPTIONS", (bad, message) => {
    expect(() => createToolRunner({ tools: undefined, ...(bad as object) })).toThrowError(
      expect.objectContaining({
        code: SANDBOX_CODES.INVALID_OPTIONS,
        message: `${message} (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md`,
      }),
    );
  });

  it("normalises tools it is given as written, as per-execution options", () => {
    expect(() =>
      createToolRunner({ tools: { "bad name": weather(() => 1).getWeather as never } }),
    ).toThrowError(expect.objectContaining({ code: SANDBOX_CODES.INVALID_OPTIONS }));
    expect(createToolRunner({ tools: weather(() => 1) }).names).toEqual(["getWeather"]);
  });
});
