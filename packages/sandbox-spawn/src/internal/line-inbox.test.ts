import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLineInbox } from "./line-inbox.js";

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("createLineInbox", () => {
  it("resolves the first line and hands every later one to the listener in order, those before listen() included", async () => {
    const stream = new PassThrough();
    const inbox = createLineInbox(stream);
    const euro = Buffer.from("€");
    stream.write('{"code":"1"}\nearly\nsp');
    stream.write(Buffer.concat([Buffer.from("lit "), euro.subarray(0, 1)]));
    stream.write(Buffer.concat([euro.subarray(1), Buffer.from("\n")]));
    const first = await inbox.first;
    const lines: string[] = [];
    inbox.listen((line) => lines.push(line));
    stream.end("late\nno newline");
    await turn();
    expect({ first, lines }).toEqual({
      first: '{"code":"1"}',
      lines: ["early", "split €", "late", "no newline"],
    });
  });

  it("resolves the text up to end-of-file when no newline comes, and an empty string for an empty stream", async () => {
    const unterminated = new PassThrough();
    const empty = new PassThrough();
    const [a, b] = [createLineInbox(unterminated), createLineInbox(empty)];
    unterminated.end('{"code":"2"}');
    empty.end();
    expect([await a.first, await b.first]).toEqual(['{"code":"2"}', ""]);
  });

  it("counts a stream error as its end", async () => {
    const stream = new PassThrough();
    const inbox = createLineInbox(stream);
    stream.destroy(new Error("EIO"));
    expect(await inbox.first).toBe("");
  });
});
