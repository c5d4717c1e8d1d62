import { createHostCodec, startVmExecution } from "@suaveplan/sandbox-guest";
import { describe, expect, it } from "vitest";
import { PRIMITIVE_WARM_UP_REQUEST, WARM_UP_CALLS, WARM_UP_REQUEST } from "./warm-up-request.js";

describe("the worker's warm-up request", () => {
  it("runs to its value, logging once and making every host call it means to warm up", async () => {
    const running = startVmExecution(WARM_UP_REQUEST, {
      onCall: (call) => {
        setImmediate(() => running.reply({ id: call.id, ok: true, text: call.text }));
        return undefined;
      },
      callbackWatchdog: false,
    });
    const { outcome, logs, toolCalls } = await running.result;
    expect(outcome.kind).toBe("value");
    expect(createHostCodec().decode((outcome as { text: string }).text)).toEqual({
      n: 1,
      list: [new Date(0)],
    });
    expect(logs.map((entry) => entry.message)).toEqual(["{ a: [ 1, 'b' ] }"]);
    expect(toolCalls).toBe(WARM_UP_CALLS);
  });

  it("has a second, straight-line request whose primitive value the host side's codec encodes", async () => {
    const { outcome, logs, toolCalls } = await startVmExecution(PRIMITIVE_WARM_UP_REQUEST, {
      watchdog: false,
      settleAtOnce: true,
      callbackWatchdog: false,
    }).result;
    expect({ outcome, logs, toolCalls }).toEqual({
      outcome: { kind: "value", text: "2" },
      logs: [],
      toolCalls: 0,
    });
  });
});
