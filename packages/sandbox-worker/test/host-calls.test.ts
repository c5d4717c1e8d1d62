import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import type { HostCalls, SandboxResult } from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { WorkerEngine } from "../src/index.js";

// Guest→host calls across the thread boundary: the guest's `tools.<name>()` in the
// worker, `hostCalls` on the host. Real workers from the built entry: `pnpm build` first.

const engines: WorkerEngine[] = [];
function makeEngine(): WorkerEngine {
  const engine = new WorkerEngine();
  engines.push(engine);
  return engine;
}
afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.destroy()));
});

/** The result without what varies from run to run. */
function stable(result: SandboxResult): Omit<SandboxResult, "duration" | "memoryUsed" | "usage"> {
  const { duration: _duration, memoryUsed: _memoryUsed, usage: _usage, ...rest } = result;
  return rest;
}

describe("WorkerEngine host calls", () => {
  it("round-trips Date and Map values through a tool running on the host", async () => {
    const engine = makeEngine();
    const seen: unknown[] = [];
    const hostCalls: HostCalls = {
      names: ["schedule"],
      async call(name, input, id) {
        seen.push({ name, input, id });
        const { when, slots } = input as { when: Date; slots: Map<string, number> };
        return { next: new Date(when.getTime() + 1000), slots: new Map([...slots, ["b", 2]]) };
      },
    };
    const result = await engine.execute(
      "const r = await tools.schedule({ when: new Date(0), slots: new Map([['a', 1]]) }); [r.next instanceof Date, r.next.getTime(), r.slots instanceof Map, [...r.slots], Object.isFrozen(tools), Object.keys(tools)]",
      {},
      { hostCalls },
    );
    expect(stable(result)).toStrictEqual({
      success: true,
      result: [
        true,
        1000,
        true,
        [
          ["a", 1],
          ["b", 2],
        ],
        true,
        ["schedule"],
      ],
      logs: [],
    });
    expect(seen).toStrictEqual([
      { name: "schedule", input: { when: new Date(0), slots: new Map([["a", 1]]) }, id: expect.any(String) },
    ]);
  });

  it("rejects a failing tool in the guest with its name, message and tool only", async () => {
    const engine = makeEngine();
    const failing = Object.assign(new Error("no weather today"), {
      name: "ToolError",
      tool: "weather",
      secret: "host-only",
    });
    const result = await engine.execute(
      "let seen = 'resolved'; try { await tools.weather({ city: 'Paris' }); } catch (e) { seen = [e instanceof Error, e.name, e.message, e.tool, e.secret, String(e.stack).includes('/work')]; } seen",
      {},
      { hostCalls: { names: ["weather"], call: () => Promise.reject(failing) } },
    );
    expect(stable(result)).toStrictEqual({
      success: true,
      result: [true, "ToolError", "no weather today", "weather", undefined, false],
      logs: [],
    });
  });

  it("completes 100 concurrent calls from one execution with the right answers", async () => {
    const engine = makeEngine();
    const result = await engine.execute(
      "const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => tools.square(i))); [answers.length, answers[99], answers.reduce((a, b) => a + b, 0)]",
      {},
      {
        hostCalls: {
          names: ["square"],
          call: async (_name, input) => {
            await new Promise((resolve) => setTimeout(resolve, (input as number) % 7));
            return (input as number) ** 2;
          },
        },
      },
    );
    expect({ ...stable(result), toolCalls: result.usage?.toolCalls }).toStrictEqual({
      success: true,
      result: [100, 9801, 328_350],
      logs: [],
      toolCalls: 100,
    });
  });

  it("defines no tools global without hostCalls", async () => {
    const engine = makeEngine();
    expect(stable(await engine.execute("typeof tools"))).toStrictEqual({
      success: true,
      result: "undefined",
      logs: [],
    });
  });

  it("drops a reply that arrives after the run timed out; the engine stays usable", async () => {
    const engine = makeEngine();
    let answer: ((value: unknown) => void) | undefined;
    const result = await engine.execute(
      "const v = await tools.slow(1); console.log('after', v); v",
      {},
      {
        timeout: 200,
        hostCalls: {
          names: ["slow"],
          call: () =>
            new Promise((resolve) => {
              answer = resolve;
            }),
        },
      },
    );
    expect(stable(result)).toStrictEqual({
      success: false,
      error:
        "Execution timed out after 200 ms (sync code, promises and timers share this budget) (SANDBOX_TIMEOUT)",
      errorCode: SANDBOX_CODES.TIMEOUT,
      logs: [],
    });
    answer?.(42);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stable(await engine.execute("'still usable'"))).toStrictEqual({
      success: true,
      result: "still usable",
      logs: [],
    });
  });
});
