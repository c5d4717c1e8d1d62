import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import type { HostCalls, SandboxResult } from "@suaveplan/sandbox-core/types";
import { buildExecutionRequest, createHostCodec, ModuleRegistry } from "@suaveplan/sandbox-guest";
import { afterEach, describe, expect, it } from "vitest";
import { SpawnEngine } from "../src/index.js";
import { buildChildArgs } from "../src/internal/node-args.js";

// Real children running the built runner: each tools.<name>() call crosses as a
// call frame on fd 3 and its reply as a line on the child's stdin.

const codec = createHostCodec();

/** A result without its measurements, for whole-value assertions. */
function settled(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed" | "usage"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

const engines: SpawnEngine[] = [];
function engine(): SpawnEngine {
  const created = new SpawnEngine({ timeout: 10_000 });
  engines.push(created);
  return created;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((created) => created.destroy()));
});

describe("SpawnEngine host calls", () => {
  it("a tool round trip carries Date and Map values both ways through a real child", async () => {
    const seen: unknown[] = [];
    const hostCalls: HostCalls = {
      names: ["lookup"],
      async call(name, input, id) {
        seen.push({ name, input, id });
        const { when, table } = input as { when: Date; table: Map<string, number> };
        return {
          later: new Date(when.getTime() + 1000),
          doubled: new Map([...table].map(([k, v]) => [k, v * 2])),
        };
      },
    };
    const result = await engine().execute(
      "const r = await tools.lookup({ when: new Date(0), table: new Map([['a', 1], ['b', 2]]) }); console.log('got', r.doubled.size); [r.later instanceof Date, r.later.getTime(), r.doubled instanceof Map, [...r.doubled]]",
      {},
      { hostCalls },
    );
    expect(settled(result)).toStrictEqual({
      success: true,
      result: [
        true,
        1000,
        true,
        [
          ["a", 2],
          ["b", 4],
        ],
      ],
      logs: [{ level: "log", message: "got 2" }],
    });
    expect(seen).toStrictEqual([
      {
        name: "lookup",
        input: {
          when: new Date(0),
          table: new Map([
            ["a", 1],
            ["b", 2],
          ]),
        },
        id: "1",
      },
    ]);
    expect({ toolCalls: result.usage?.toolCalls, crossed: (result.usage?.toolBytes ?? 0) > 0 }).toEqual({
      toolCalls: 1,
      crossed: true,
    });
  });

  it("a failing tool rejects in the guest with its name, message and tool only", async () => {
    const failure = Object.assign(new Error("no rates on Sundays"), {
      name: "ToolError",
      tool: "rates",
      secret: "host-only",
    });
    const result = await engine().execute(
      "let seen = 'resolved'; try { await tools.rates('EUR'); } catch (e) { seen = [e instanceof Error, e.name, e.message, e.tool, e.secret, Object.keys(e)]; } seen",
      {},
      { hostCalls: { names: ["rates"], call: () => Promise.reject(failure) } },
    );
    expect(settled(result)).toStrictEqual({
      success: true,
      result: [true, "ToolError", "no rates on Sundays", "rates", undefined, ["tool"]],
      logs: [],
    });
  });

  it("answers 100 concurrent calls from one execution, each with its own answer", async () => {
    const result = await engine().execute(
      "const all = await Promise.all(Array.from({ length: 100 }, (_, i) => tools.square(i))); [all.length, all.every((v, i) => v === i * i), all.reduce((a, b) => a + b, 0)]",
      {},
      {
        hostCalls: {
          names: ["square"],
          call: async (_name, input) => {
            await new Promise((resolve) => setTimeout(resolve, (input as number) % 5));
            return (input as number) ** 2;
          },
        },
      },
    );
    expect({ ...settled(result), toolCalls: result.usage?.toolCalls }).toStrictEqual({
      success: true,
      result: [100, true, 328_350],
      logs: [],
      toolCalls: 100,
    });
  });

  it("without hostCalls the guest has no tools global", async () => {
    const result = await engine().execute("typeof tools");
    expect(settled(result)).toStrictEqual({ success: true, result: "undefined", logs: [] });
  });

  it("the runner ignores stdin lines that are not replies and settles the call with the next good one", async () => {
    const built = buildExecutionRequest(
      "await tools.echo('hi')",
      undefined,
      { hostCalls: { names: ["echo"], call: async () => undefined } },
      parseEngineLimits(),
      new ModuleRegistry(),
    );
    if (!built.ok) throw new Error(built.result.error);
    const runnerPath = engine().getRunnerPath();
    const child = spawn(process.execPath, buildChildArgs(runnerPath, 64 * 1024 * 1024), {
      stdio: ["pipe", "ignore", "ignore", "pipe"],
      env: {},
    });
    const stdin = child.stdin as Writable;
    const frames: unknown[] = [];
    const lines = createInterface({ input: child.stdio[3] as Readable });
    lines.on("line", (line) => {
      const frame = JSON.parse(line) as { type: string; call?: { id: number; text: string } };
      frames.push(frame);
      if (frame.type === "call" && frame.call !== undefined) {
        const { id, text } = frame.call;
        stdin.write("not json\n");
        stdin.write(`${JSON.stringify({ id, ok: "yes", text })}\n`);
        stdin.write(`${JSON.stringify({ id: id + 1, ok: true, text: '"wrong id"' })}\n`);
        stdin.write(`${JSON.stringify({ id, ok: true, text: codec.encode("echoed", "output", 1024) })}\n`);
      }
    });
    stdin.write(`${JSON.stringify(built.request)}\n`);
    const [code] = await once(child, "close");
    expect({ code, frames }).toStrictEqual({
      code: 0,
      frames: [
        { type: "start" },
        { type: "call", call: { id: 1, name: "echo", text: codec.encode("hi", "input", 1024) } },
        {
          type: "done",
          outcome: { kind: "value", text: codec.encode("echoed", "result", 1024) },
          memoryUsed: expect.any(Number),
          cpuMs: expect.any(Number),
          toolCalls: 1,
          toolBytes:
            (codec.encode("hi", "input", 1024).length + codec.encode("echoed", "output", 1024).length) * 2,
          peakBytes: expect.any(Number),
        },
      ],
    });
  });
});
