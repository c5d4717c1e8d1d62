import type { KernelBridge } from "@suaveplan/sandbox-kernel";
import { describe, expect, it } from "vitest";
import type { GuestCall } from "../protocol/protocol.js";
import { type DriverPlan, GuestDriver, type GuestRealm, type RealmStatus } from "./guest-driver.js";

const OK: RealmStatus = { ok: true };

function plan(onCall: (call: GuestCall) => string | undefined): DriverPlan {
  return {
    timeoutMs: 2_000,
    maxOutputSize: 1_024,
    maxLogLines: 10,
    maxTimers: 10,
    maxTimerCreations: 100,
    maxResultBytes: 1_024,
    maxCallBytes: 1_024,
    tools: ["echo"],
    contextText: "",
    modulesText: "",
    sourceModules: [],
    onCall,
  };
}

/**
 * A realm standing in for isolated-vm's: its guest queues a call (`callQueued`, not waiting for the
 * answer) and reports a value; `late` delivers the call only after the entry returned, as a task
 * the host's thread runs later. Entries it is asked to run are recorded.
 */
function queuingRealm(late: boolean): { create: (bridge: KernelBridge) => GuestRealm; entries: unknown[][] } {
  const entries: unknown[][] = [];
  const create = (bridge: KernelBridge): GuestRealm => ({
    boot: () => OK,
    main: () => {
      const queue = () => bridge("callQueued", 1, "echo", '"hi"');
      if (late) setImmediate(queue);
      else queue();
      bridge("done", "value", "5");
      return OK;
    },
    enter: (name, args) => {
      entries.push([name, ...args]);
      return OK;
    },
    quiesce: () => new Promise((resolve) => setImmediate(resolve)),
    dispose: () => undefined,
  });
  return { create, entries };
}

describe("GuestDriver with a realm that queues its calls", () => {
  it("hands a refused queued call back to the guest as a failed reply, and ends with the value", async () => {
    const { create, entries } = queuingRealm(false);
    const driver = new GuestDriver(
      plan(() => '{"name":"ToolError","message":"too many tool calls"}'),
      create,
    );
    const result = await driver.result;
    expect({ outcome: result.outcome, entries, toolCalls: result.toolCalls }).toEqual({
      outcome: { kind: "value", text: "5" },
      entries: [["reply", 1, false, '{"name":"ToolError","message":"too many tool calls"}']],
      toolCalls: 0,
    });
  });

  it("waits for a call that reaches the host after the value was reported, and answers it", async () => {
    const { create, entries } = queuingRealm(true);
    let driver: GuestDriver | undefined;
    const calls: GuestCall[] = [];
    driver = new GuestDriver(
      plan((call) => {
        calls.push(call);
        setTimeout(() => driver?.reply({ id: call.id, ok: true, text: '"hi"' }), 20);
        return undefined;
      }),
      (bridge) => create(bridge),
    );
    const result = await driver.result;
    expect({ outcome: result.outcome, calls, entries, toolCalls: result.toolCalls }).toEqual({
      outcome: { kind: "value", text: "5" },
      calls: [{ id: 1, name: "echo", text: '"hi"' }],
      entries: [["reply", 1, true, '"hi"']],
      toolCalls: 1,
    });
  });
});
