import { describe, expect, it } from "vitest";
import { parseCallReply } from "./parse-call-reply.js";

describe("parseCallReply", () => {
  it("reads a well-formed reply, keeping only its three fields", () => {
    expect(parseCallReply('{"id":3,"ok":false,"text":"{}","extra":1}')).toStrictEqual({
      id: 3,
      ok: false,
      text: "{}",
    });
  });

  it("returns undefined for every line that is not a reply", () => {
    const lines = [
      "",
      "not json",
      "[]",
      "null",
      '{"ok":true,"text":"1"}',
      '{"id":-1,"ok":true,"text":"1"}',
      '{"id":1.5,"ok":true,"text":"1"}',
      '{"id":"1","ok":true,"text":"1"}',
      '{"id":1,"ok":"yes","text":"1"}',
      '{"id":1,"ok":true,"text":1}',
    ];
    expect(lines.map(parseCallReply)).toEqual(lines.map(() => undefined));
  });
});
