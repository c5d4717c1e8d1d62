import { PermissionChecker } from "@suaveplan/api-sandbox-permissions";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createVmToolHost, JOURNAL_SIZE } from "./vm-tool-host.js";

function host() {
  return createVmToolHost({
    checker: new PermissionChecker({ tools: ["echo", "count"] }, { cwd: "/" }),
    tools: {
      echo: { inputSchema: z.object({ n: z.number() }), execute: ({ n }: { n: number }) => n },
      count: {
        inputSchema: z.object({}),
        async *execute() {
          yield 1;
          yield 2;
        },
      },
    },
  });
}

describe("the plugin's tool host on sandbox-tools' runner", () => {
  it("keeps the last JOURNAL_SIZE calls of a long-lived plugin, numbering ids on", async () => {
    const tools = host();
    for (let n = 1; n <= JOURNAL_SIZE + 2; n++) await tools.call("echo", { n });
    const calls = tools.calls();
    expect({ kept: calls.length, first: calls[0]?.id, last: calls.at(-1)?.id }).toEqual({
      kept: 1000,
      first: "call_3",
      last: "call_1002",
    });
    expect(calls.at(-1)).toMatchObject({ input: { n: 1002 }, output: 1002, status: "ok" });
  });

  it("gives an async-generator execute's last value", async () => {
    expect(await host().call("count", {})).toBe(2);
  });

  it("after dispose refuses every call with SAND_VM_DISPOSED, journaled as refused", async () => {
    const tools = host();
    tools.dispose();
    tools.dispose();
    const message = "tool echo was refused: the sandbox is disposed";
    await expect(tools.call("echo", { n: 1 })).rejects.toEqual({
      code: "SAND_VM_DISPOSED",
      name: "ToolError",
      tool: "echo",
      message,
    });
    expect(tools.calls()).toEqual([
      {
        id: "call_1",
        tool: "echo",
        input: { n: 1 },
        error: { name: "ToolError", tool: "echo", message },
        ok: false,
        status: "refused",
        durationMs: expect.any(Number),
      },
    ]);
    expect(tools.inFlight).toBe(0);
  });
});
