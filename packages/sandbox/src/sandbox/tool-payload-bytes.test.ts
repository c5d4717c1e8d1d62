import { ENGINE_NAMES } from "@suaveplan/sandbox-core/types";
import { createHostCodec } from "@suaveplan/sandbox-guest";
import { createToolRunner, TOOL_LIMIT_DEFAULTS } from "@suaveplan/sandbox-tools";
import { afterEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./sandbox.js";

/** Every engine must count the same bytes (worker, spawn and isolate's helper run the built kernel). */
// Every built-in engine: one behaviour, one table.
const ENGINES = ENGINE_NAMES;

const live: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(live.splice(0).map((sandbox) => sandbox.destroy()));
});
const sandboxOf = (config: Parameters<typeof createSandbox>[0]) => {
  const sandbox = createSandbox({ timeout: 20_000, ...config });
  live.push(sandbox);
  return sandbox;
};

const DEFAULT = TOOL_LIMIT_DEFAULTS.maxToolPayloadBytes;

describe.each(ENGINES)("maxToolPayloadBytes counts UTF-8 bytes of what crosses (%s)", (engine) => {
  it("is precise: limit = default + 4 KiB lets default + 1 KiB through both ways and refuses limit + 1 KiB by the tool's name", async () => {
    const limit = DEFAULT + 4096;
    let ran = 0;
    const sandbox = sandboxOf({
      engine,
      maxToolPayloadBytes: limit,
      tools: {
        echo: {
          inputSchema: { type: "string" },
          execute: (input: string) => {
            ran++;
            return input;
          },
        },
      },
    });
    const r = await sandbox.execute(`
      const fits = "x".repeat(${DEFAULT + 1024});
      const back = await tools.echo(fits);
      let refused;
      try { await tools.echo("x".repeat(${limit + 1024})); } catch (e) { refused = [e.name, e.tool, e.message]; }
      [back.length, refused]`);
    expect({ success: r.success, result: r.result, error: r.error }).toEqual({
      success: true,
      result: [
        DEFAULT + 1024,
        [
          "ToolError",
          "echo",
          `tool echo was refused: its input is larger than ${limit} bytes (maxToolPayloadBytes)`,
        ],
      ],
      error: undefined,
    });
    expect(ran).toBe(1);
    expect(r.calls?.map(({ status, tool, input }) => [tool, status, typeof input])).toEqual([
      ["echo", "ok", "string"],
      ["echo", "limit", "undefined"],
    ]);
  });

  it("a 20,000-row result of about 0.36 MB JSON passes the 1 MiB default", async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ id: i, ok: i % 2 === 0 }));
    const sandbox = sandboxOf({ engine, tools: { list: { inputSchema: {}, execute: () => rows } } });
    const r = await sandbox.execute(`const rows = await tools.list({}); [rows.length, rows[19999].id]`);
    expect({ success: r.success, result: r.result, error: r.error }).toEqual({
      success: true,
      result: [20_000, 19_999],
      error: undefined,
    });
  });

  it("a non-ASCII input counts its UTF-8 bytes: 2 per é, so 600 KiB of é is refused under 1 MiB", async () => {
    const sandbox = sandboxOf({
      engine,
      tools: { echo: { inputSchema: {}, execute: (input: unknown) => input } },
    });
    const r = await sandbox.execute(`
      let refused;
      try { await tools.echo("é".repeat(600 * 1024)); } catch (e) { refused = e.message; }
      const fine = await tools.echo("é".repeat(500 * 1024));
      [refused, fine.length]`);
    expect(r.result).toEqual([
      `tool echo was refused: its input is larger than ${DEFAULT} bytes (maxToolPayloadBytes)`,
      500 * 1024,
    ]);
  });
});

describe("the tool runner's measure", () => {
  it("is the UTF-8 byte length of the codec text that crosses", async () => {
    const codec = createHostCodec();
    const runner = createToolRunner({ tools: { echo: { inputSchema: {}, execute: () => 0 } } });
    const shared = { s: "shared" };
    const cyclic: Record<string, unknown> = { a: [1, 2] };
    cyclic.self = cyclic;
    const inputs: unknown[] = [
      "plain",
      'quote " and backslash \\ and \n\t\u0001',
      "é ü ß — 中文 😀 \ud800 lone",
      0,
      -0,
      1.5e-7,
      -123456789012,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      true,
      null,
      undefined,
      12345678901234567890n,
      Object.assign(new Array(3), { 0: 1, 2: 3 }), // a hole at 1
      [undefined, null, [], {}],
      { id: 7, name: "Ada", tags: ["a", "b"], nested: { deep: { deeper: [true] } } },
      { "key with space": 1, é: "ü", __proto__x: 2 },
      [shared, shared, { again: shared }],
      cyclic,
      new Map<unknown, unknown>([
        ["k", 1],
        [2, { v: [3] }],
      ]),
      new Set(["a", 1, null]),
      Array.from({ length: 50 }, (_, i) => ({ id: i, ok: i % 2 === 0, label: `row ${i}` })),
    ];
    let before = 0;
    const measured: number[] = [];
    const expected: number[] = [];
    for (const [i, input] of inputs.entries()) {
      await runner.call("echo", input, String(i));
      const after = runner.usage().inputBytes;
      measured.push(after - before);
      expected.push(Buffer.byteLength(codec.encode(input, "input", 1e9), "utf8"));
      before = after;
    }
    expect(measured).toEqual(expected);
  });
});
