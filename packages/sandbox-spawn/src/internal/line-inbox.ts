import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/** The newline-delimited lines of a stream, split as they arrive (see {@link createLineInbox}). */
export interface LineInbox {
  /** The first line (without its newline), or the text up to end-of-file when no newline came ("" for an empty stream). */
  readonly first: Promise<string>;
  /** Hand every later line to `listener`, in order, starting with those already received. */
  listen(listener: (line: string) => void): void;
}

/**
 * Split `stream` (UTF-8) into lines: the first resolves {@link LineInbox.first}
 * (the runner's request), every later one goes to the listener (the host's
 * replies). The unfinished line is kept as pieces, so a huge request is
 * scanned once. A stream error counts as its end.
 */
export function createLineInbox(stream: Readable): LineInbox {
  const decoder = new StringDecoder("utf8");
  let pieces: string[] = [];
  const queued: string[] = [];
  let listener: ((line: string) => void) | undefined;
  let firstTaken = false;
  let ended = false;
  let resolveFirst: (line: string) => void = () => {};
  const first = new Promise<string>((resolve) => {
    resolveFirst = resolve;
  });
  const push = (line: string): void => {
    if (!firstTaken) {
      firstTaken = true;
      resolveFirst(line);
    } else if (listener === undefined) queued.push(line);
    else listener(line);
  };
  const onData = (chunk: Buffer | string): void => {
    let text = typeof chunk === "string" ? chunk : decoder.write(chunk);
    let newline = text.indexOf("\n");
    while (newline !== -1) {
      pieces.push(text.slice(0, newline));
      const line = pieces.join("");
      pieces = [];
      push(line);
      text = text.slice(newline + 1);
      newline = text.indexOf("\n");
    }
    if (text !== "") pieces.push(text);
  };
  const onEnd = (): void => {
    if (ended) return;
    ended = true;
    stream.off("data", onData);
    const rest = pieces.join("") + decoder.end();
    pieces = [];
    if (rest !== "" || !firstTaken) push(rest);
  };
  stream.on("data", onData);
  stream.on("end", onEnd);
  stream.on("error", onEnd);
  return {
    first,
    listen(next) {
      listener = next;
      for (const line of queued.splice(0)) next(line);
    },
  };
}
