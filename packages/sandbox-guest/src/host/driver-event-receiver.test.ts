import type { LogEntry } from "@suaveplan/sandbox-core/types";
import { createHostCodec } from "@suaveplan/sandbox-kernel";
import { describe, expect, it } from "vitest";
import type { CallReply, DriverEvent, GuestOutcome } from "../protocol/protocol.js";
import { DriverEventReceiver, type DriverReport } from "./driver-event-receiver.js";

const codec = createHostCodec();

function receiver(
  hostCalls = { names: ["double"], call: async (_name: string, input: unknown) => (input as number) * 2 },
) {
  const seen = {
    logs: [] as LogEntry[],
    replies: [] as CallReply[],
    done: [] as [GuestOutcome, DriverReport][],
  };
  let ended = false;
  const events = new DriverEventReceiver({
    onLog: (entry) => seen.logs.push(entry),
    hostCalls,
    sendReply: (reply) => seen.replies.push(reply),
    ended: () => ended,
    onDone: (outcome, report) => {
      seen.done.push([outcome, report]);
      ended = true;
    },
  });
  return { events, seen, end: () => (ended = true) };
}

describe("DriverEventReceiver", () => {
  it("keeps valid console lines and ignores malformed events", () => {
    const { events, seen } = receiver();
    events.receive({ type: "log", level: "warn", message: "careful" });
    events.receive({ type: "log", level: "shout", message: "no" } as unknown as DriverEvent);
    events.receive({ type: "log", level: "log", message: 42 } as unknown as DriverEvent);
    events.receive(null as unknown as DriverEvent);
    events.receive({ type: "call", call: { id: "1", name: "double", text: "" } } as unknown as DriverEvent);
    expect({ logs: events.logs, onLog: seen.logs, seen: events.seen() }).toEqual({
      logs: [{ level: "warn", message: "careful" }],
      onLog: [{ level: "warn", message: "careful" }],
      seen: { memoryUsed: undefined, cpuMs: undefined, toolCalls: 0, toolBytes: 0 },
    });
  });

  it("answers a call, counts it both ways, and passes the realm's report on", async () => {
    const { events, seen } = receiver();
    const text = codec.encode(21, "input", 1024);
    events.receive({ type: "call", call: { id: 1, name: "double", text } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.replies).toEqual([{ id: 1, ok: true, text: codec.encode(42, "output", 1024) }]);
    const replyText = seen.replies[0]!.text;
    expect(events.seen().toolBytes).toBe((text.length + replyText.length) * 2);
    events.receive({
      type: "done",
      outcome: { kind: "value", text: "1" },
      memoryUsed: 7,
      toolCalls: 1,
      toolBytes: 9,
    });
    expect(seen.done).toEqual([
      [
        { kind: "value", text: "1" },
        { memoryUsed: 7, cpuMs: undefined, toolCalls: 1, toolBytes: 9 },
      ],
    ]);
  });

  it("drops a reply that comes back after the run ended, and every later event", async () => {
    const { events, seen, end } = receiver();
    events.receive({ type: "call", call: { id: 1, name: "double", text: codec.encode(1, "input", 1024) } });
    end();
    events.receive({ type: "log", level: "log", message: "late" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect({ replies: seen.replies, logs: events.logs }).toEqual({ replies: [], logs: [] });
  });
});
