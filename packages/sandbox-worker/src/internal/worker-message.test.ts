import { describe, expect, it } from "vitest";
import { callMessage, readCallMessage, readReplyMessage, replyMessage } from "./worker-message.js";

describe("the call and reply wire strings", () => {
  it.each([
    { id: 1, name: "echo", text: "1" },
    { id: 42, name: "get weather", text: '{"city":"Paris 1 2"}' },
    { id: 7, name: "", text: "" },
    { id: 9_007_199_254_740_991, name: "a 3 b", text: " 1 0 " },
  ])("a call reads back as it was sent: $name", (call) => {
    expect(readCallMessage(callMessage(call))).toEqual(call);
  });

  it.each([
    [3, { id: 1, ok: true, text: "[1,2]" }],
    [1, { id: 12, ok: false, text: '{"name":"ToolError","message":"no 1 2"}' }],
    [2, { id: 5, ok: true, text: "" }],
  ])("a reply of run %i reads back as it was sent", (run, reply) => {
    expect(readReplyMessage(replyMessage(run, reply))).toEqual({ run, reply });
  });

  it.each(["", "x", "1", "1 ", "a 4 echo1", "1 9 echo", "1 -1 echo", "1.5 4 echo1"])(
    "%j is not a call",
    (message) => {
      expect(readCallMessage(message)).toBeUndefined();
    },
  );

  it.each(["", "1", "1 2", "1 2 3 text", "1 2 1", "x 2 1 text", "1 y 0 text", "1 2 10 text"])(
    "%j is not a reply",
    (message) => {
      expect(readReplyMessage(message)).toBeUndefined();
    },
  );
});
