import { afterEach, describe, expect, it, vi } from "vitest";
import { isSandboxError, SANDBOX_CODES, type SandboxError } from "../error-codes/index.js";
import type { SandboxResult } from "../types/index.js";
import { ResultStreamer, type StreamChunk } from "./index.js";

const RESULT: SandboxResult = { success: true, result: 5, duration: 3, logs: [] };

/** Clock returning 1000, 1001, 1002, … */
function counterClock(): () => number {
  let now = 1_000;
  return () => now++;
}

function thrown(run: () => unknown): SandboxError {
  try {
    run();
  } catch (error) {
    if (isSandboxError(error)) return error;
    throw error;
  }
  throw new Error("expected a SandboxError");
}

afterEach(() => {
  vi.useRealTimers();
});

describe("ResultStreamer", () => {
  it("raises STREAM_CLOSED after complete", () => {
    const stream = new ResultStreamer();
    stream.complete(RESULT);
    expect(stream.closed).toBe(true);

    const error = thrown(() => stream.pushLog("late"));
    expect(error.code).toBe(SANDBOX_CODES.STREAM_CLOSED);
    expect(error.message).toBe(
      "ResultStreamer.pushLog: the stream is closed (after complete()); use a new ResultStreamer for each execution (SANDBOX_STREAM_CLOSED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_STREAM_CLOSED.md",
    );
    expect(thrown(() => stream.pushError("late")).code).toBe("SANDBOX_STREAM_CLOSED");
    expect(thrown(() => stream.pushResult(1)).code).toBe("SANDBOX_STREAM_CLOSED");
    expect(thrown(() => stream.complete(RESULT)).code).toBe("SANDBOX_STREAM_CLOSED");
    expect(thrown(() => stream.pushChunk({ type: "log", data: "late" })).message).toBe(
      "ResultStreamer.pushChunk: the stream is closed (after complete()); use a new ResultStreamer for each execution (SANDBOX_STREAM_CLOSED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_STREAM_CLOSED.md",
    );
  });

  it("pushChunk stamps log, error and result chunks and refuses a complete chunk", () => {
    const stream = new ResultStreamer({ clock: () => 5 });
    const received: StreamChunk[] = [];
    stream.subscribe((chunk) => received.push(chunk));
    stream.pushChunk({ type: "log", data: "l", level: "warn" });
    stream.pushChunk({ type: "error", data: "e" });
    stream.pushChunk({ type: "result", data: [1] });
    const error = thrown(() => stream.pushChunk({ type: "complete", data: RESULT } as never));
    expect(error.message).toBe(
      "ResultStreamer.pushChunk: chunk.type must be log, error or result; end the stream with complete(result) (SANDBOX_INVALID_OPTIONS); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_OPTIONS.md",
    );
    stream.flush();
    expect(received).toEqual([
      { type: "log", data: "l", level: "warn", timestamp: 5 },
      { type: "error", data: "e", timestamp: 5 },
      { type: "result", data: [1], timestamp: 5 },
    ]);
    stream.destroy();
  });

  it("flush emits buffered chunks to subscribers", () => {
    const stream = new ResultStreamer({ clock: counterClock() });
    const received: StreamChunk[] = [];
    stream.subscribe((chunk) => received.push(chunk));

    stream.pushLog("a");
    expect(received).toEqual([]);
    expect(stream.pending).toBe(1);

    stream.flush();
    expect(received).toEqual([{ type: "log", data: "a", timestamp: 1_000 }]);
    stream.flush(); // nothing buffered: nothing delivered twice
    expect(received).toHaveLength(1);
    stream.destroy();
  });

  it("flushes on the interval; the lazy, unref'd timer is released by complete and stop", () => {
    vi.useFakeTimers();
    const stream = new ResultStreamer({ flushIntervalMs: 100, clock: () => 7 });
    const received: StreamChunk[] = [];
    stream.subscribe((chunk) => received.push(chunk));
    expect(vi.getTimerCount()).toBe(0);

    stream.pushLog("tick", "info");
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(99);
    expect(received).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(received).toEqual([{ type: "log", data: "tick", level: "info", timestamp: 7 }]);

    stream.pushResult({ partial: true });
    stream.complete(RESULT);
    expect(vi.getTimerCount()).toBe(0);
    expect(received).toEqual([
      { type: "log", data: "tick", level: "info", timestamp: 7 },
      { type: "result", data: { partial: true }, timestamp: 7 },
      { type: "complete", data: RESULT, timestamp: 7 },
    ]);

    // stop(): flushes, releases the timer, and later pushes wait for an explicit flush.
    const stopped = new ResultStreamer({ flushIntervalMs: 10, clock: () => 0 });
    const data: unknown[] = [];
    stopped.subscribe((chunk) => data.push(chunk.data));
    stopped.pushLog("before");
    expect(vi.getTimerCount()).toBe(1);
    stopped.stop();
    expect(data).toEqual(["before"]);
    expect(vi.getTimerCount()).toBe(0);
    stopped.pushLog("after");
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(100);
    expect(data).toEqual(["before"]);
    stopped.flush();
    expect(data).toEqual(["before", "after"]);
    stopped.destroy();
  });

  it("flushes as soon as maxBufferSize chunks are waiting", () => {
    const stream = new ResultStreamer({ maxBufferSize: 3, clock: () => 0 });
    const received: string[] = [];
    stream.subscribe((chunk) => received.push(`${chunk.type}:${String(chunk.data)}`));
    stream.pushLog("1");
    stream.pushError(new Error("boom"));
    expect(received).toEqual([]);
    stream.pushResult(3);
    expect(received).toEqual(["log:1", "error:boom", "result:3"]);
    expect(stream.pending).toBe(0);
    stream.destroy();
  });

  it("keeps only the message of a pushed Error", () => {
    const stream = new ResultStreamer({ clock: () => 0 });
    const received: StreamChunk[] = [];
    stream.subscribe((chunk) => received.push(chunk));
    const error = new Error("bad input");
    stream.pushError(error);
    stream.pushError("plain text");
    stream.flush();
    expect(received).toEqual([
      { type: "error", data: "bad input", timestamp: 0 },
      { type: "error", data: "plain text", timestamp: 0 },
    ]);
    expect(JSON.stringify(received)).not.toContain(".ts:");
    stream.destroy();
  });

  it("stops delivering to an unsubscribed listener", () => {
    const stream = new ResultStreamer({ clock: () => 0 });
    const received: string[] = [];
    const unsubscribe = stream.subscribe((chunk) => received.push(String(chunk.data)));
    stream.pushLog("kept");
    stream.flush();
    unsubscribe();
    stream.pushLog("missed");
    stream.flush();
    expect(received).toEqual(["kept"]);
    stream.destroy();
  });

  it("iterates chunks with for await and ends after the complete chunk", async () => {
    const stream = new ResultStreamer({ clock: () => 1 });
    const seen: StreamChunk[] = [];
    const reading = (async () => {
      for await (const chunk of stream) seen.push(chunk);
    })();
    stream.pushLog("one");
    stream.flush();
    stream.pushResult(2);
    stream.complete(RESULT);
    await reading;
    expect(seen).toEqual([
      { type: "log", data: "one", timestamp: 1 },
      { type: "result", data: 2, timestamp: 1 },
      { type: "complete", data: RESULT, timestamp: 1 },
    ]);

    const late: StreamChunk[] = [];
    for await (const chunk of stream.toAsyncIterable()) late.push(chunk);
    expect(late).toEqual([]);
  });

  it("fails an iterator that leaves more than maxPendingChunks unread", async () => {
    const stream = new ResultStreamer({ maxPendingChunks: 2, clock: () => 0 });
    const iterator = stream[Symbol.asyncIterator]();
    stream.pushLog("1");
    stream.pushLog("2");
    stream.pushLog("3");
    stream.flush();
    const error = await iterator.next().then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isSandboxError(error, "SANDBOX_STREAM_CLOSED")).toBe(true);
    expect((error as Error).message).toBe(
      "ResultStreamer iterator: more than 2 chunks were left unread, so the iterator was closed; read faster or raise maxPendingChunks (SANDBOX_STREAM_CLOSED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_STREAM_CLOSED.md",
    );
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    stream.destroy();
  });

  it("ends pending iterators and drops buffered chunks on destroy, idempotently", async () => {
    const stream = new ResultStreamer();
    const received: StreamChunk[] = [];
    stream.subscribe((chunk) => received.push(chunk));
    const iterator = stream[Symbol.asyncIterator]();
    const pending = iterator.next();
    stream.pushLog("never delivered");
    stream.destroy();
    stream.destroy();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(received).toEqual([]);
    expect(stream.pending).toBe(0);
    expect(thrown(() => stream.pushLog("x")).message).toBe(
      "ResultStreamer.pushLog: the stream is closed (after destroy()); use a new ResultStreamer for each execution (SANDBOX_STREAM_CLOSED); see @suaveplan/sandbox-core/docs/errors/SANDBOX_STREAM_CLOSED.md",
    );
  });

  it("detaches an iterator the consumer stops early", async () => {
    const stream = new ResultStreamer({ maxPendingChunks: 1, clock: () => 0 });
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const chunk of stream) {
        seen.push(chunk.data);
        break;
      }
    })();
    stream.pushLog("first");
    stream.flush();
    await reading;
    // Detached: further chunks neither queue up nor overflow the stopped iterator.
    for (let i = 0; i < 5; i++) stream.pushLog(String(i));
    stream.complete(RESULT);
    expect(seen).toEqual(["first"]);
  });

  it("delivers to every listener even when one throws, then reports the error", () => {
    const stream = new ResultStreamer({ clock: () => 0 });
    const received: unknown[] = [];
    const failure = new Error("listener bug");
    stream.subscribe(() => {
      throw failure;
    });
    stream.subscribe((chunk) => received.push(chunk.data));
    stream.pushLog("a");
    expect(() => stream.flush()).toThrow(failure);
    expect(received).toEqual(["a"]);

    const reported: unknown[] = [];
    const routed = new ResultStreamer({ clock: () => 0, onListenerError: (error) => reported.push(error) });
    routed.subscribe(() => {
      throw failure;
    });
    routed.pushLog("b");
    routed.flush();
    expect(reported).toEqual([failure]);
    stream.destroy();
    routed.destroy();
  });

  it("rejects non-positive sizes with INVALID_CONFIG", () => {
    expect(() => new ResultStreamer({ maxBufferSize: 0 })).toThrowError(
      "ResultStreamer: maxBufferSize must be a positive integer (got 0) (SANDBOX_INVALID_CONFIG); see @suaveplan/sandbox-core/docs/errors/SANDBOX_INVALID_CONFIG.md",
    );
  });
});
