import { SANDBOX_CODES, SandboxError } from "../error-codes/sandbox-codes.js";
import { type Clock, type LogLevel, MAX_TIMER_MS, type SandboxResult } from "../types/sandbox-types.js";

/** A console line. */
export interface StreamLogChunk {
  type: "log";
  data: string;
  /** The console method, when the producer knows it. */
  level?: LogLevel;
  /** When the chunk was pushed, epoch ms. */
  timestamp: number;
}

/** A failure message (text only, never a stack). */
export interface StreamErrorChunk {
  type: "error";
  data: string;
  timestamp: number;
}

/** An intermediate or final value. */
export interface StreamResultChunk {
  type: "result";
  data: unknown;
  timestamp: number;
}

/** The last chunk of every completed stream: the execution's whole result. */
export interface StreamCompleteChunk {
  type: "complete";
  data: SandboxResult;
  timestamp: number;
}

/** One unit delivered to subscribers and iterators. */
export type StreamChunk = StreamLogChunk | StreamErrorChunk | StreamResultChunk | StreamCompleteChunk;

/** What {@link ResultStreamer.pushChunk} accepts: any non-final chunk, without its timestamp. */
export type PushableChunk =
  | Omit<StreamLogChunk, "timestamp">
  | Omit<StreamErrorChunk, "timestamp">
  | Omit<StreamResultChunk, "timestamp">;

/** Receives chunks on every flush, in push order. */
export type StreamListener = (chunk: StreamChunk) => void;

/** Options of {@link ResultStreamer}. */
export interface ResultStreamerOptions {
  /** Buffered chunks that trigger an immediate flush. Default 64. */
  maxBufferSize?: number;
  /** Interval of the background flush, in ms. Default 50. */
  flushIntervalMs?: number;
  /** Unread chunks one async iterator may hold before it fails with STREAM_CLOSED. Default 10 000. */
  maxPendingChunks?: number;
  /** Source of chunk timestamps, epoch ms. Default `Date.now`. */
  clock?: Clock;
  /**
   * Receives exceptions thrown by listeners. Without it, a listener's
   * exception is re-thrown to whoever triggered the flush (`push*`, `flush`,
   * `complete`) after every listener got every chunk; during an interval
   * flush that is an uncaught exception.
   */
  onListenerError?: (error: unknown) => void;
}

type State = "open" | "stopped" | "completed" | "destroyed";

const DEFAULT_MAX_BUFFER = 64;
const DEFAULT_FLUSH_INTERVAL_MS = 50;
const DEFAULT_MAX_PENDING = 10_000;

/**
 * Buffers an execution's logs, errors and results and hands them to
 * subscribers in batches: when `maxBufferSize` chunks are waiting, every
 * `flushIntervalMs`, on {@link flush} and on {@link complete}. After
 * `complete()` the stream is closed and every push throws `SANDBOX_STREAM_CLOSED`.
 *
 * The interval timer starts with the first push, is `unref()`ed, and is
 * released by {@link stop}, {@link complete} and {@link destroy}.
 *
 * @example
 * const stream = new ResultStreamer();
 * const done = (async () => { for await (const chunk of stream) console.log(chunk.type, chunk.data); })();
 * stream.pushLog("hello");
 * stream.complete({ success: true, result: 2, duration: 3, logs: [] });
 * await done;
 */
export class ResultStreamer implements AsyncIterable<StreamChunk> {
  private buffer: StreamChunk[] = [];
  private readonly listeners = new Set<StreamListener>();
  private readonly iterators = new Set<ChunkQueue>();
  private timer: NodeJS.Timeout | undefined;
  private state: State = "open";
  private readonly maxBufferSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxPendingChunks: number;
  private readonly clock: Clock;
  private readonly onListenerError: ((error: unknown) => void) | undefined;

  constructor(options: ResultStreamerOptions = {}) {
    this.maxBufferSize = positiveInteger("maxBufferSize", options.maxBufferSize ?? DEFAULT_MAX_BUFFER);
    this.flushIntervalMs = positiveInteger(
      "flushIntervalMs",
      options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS,
    );
    if (this.flushIntervalMs > MAX_TIMER_MS) {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_CONFIG,
        `ResultStreamer: flushIntervalMs must be at most ${MAX_TIMER_MS} ms, setInterval's ceiling (got ${this.flushIntervalMs})`,
        { details: { field: "flushIntervalMs" } },
      );
    }
    this.maxPendingChunks = positiveInteger(
      "maxPendingChunks",
      options.maxPendingChunks ?? DEFAULT_MAX_PENDING,
    );
    this.clock = optionalFunction("clock", options.clock) ?? Date.now;
    this.onListenerError = optionalFunction("onListenerError", options.onListenerError);
  }

  /** True after {@link complete} or {@link destroy}: pushes throw `SANDBOX_STREAM_CLOSED`. */
  get closed(): boolean {
    return this.state === "completed" || this.state === "destroyed";
  }

  /** Chunks waiting for the next flush. */
  get pending(): number {
    return this.buffer.length;
  }

  /** Receive every chunk flushed from now on; returns the unsubscribe function. */
  subscribe(listener: StreamListener): () => void {
    if (this.state !== "destroyed") this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Queue a console line. */
  pushLog(message: string, level?: LogLevel): void {
    this.stamp(
      "pushLog",
      level === undefined ? { type: "log", data: message } : { type: "log", data: message, level },
    );
  }

  /** Queue a failure; an `Error` contributes its message only (never its stack). */
  pushError(error: unknown): void {
    this.stamp("pushError", { type: "error", data: error instanceof Error ? error.message : String(error) });
  }

  /** Queue a value. */
  pushResult(value: unknown): void {
    this.stamp("pushResult", { type: "result", data: value });
  }

  /**
   * Queue a `log`, `error` or `result` chunk, stamped with the clock (end the
   * stream with {@link complete}). Throws `SANDBOX_STREAM_CLOSED` once closed.
   */
  pushChunk(chunk: PushableChunk): void {
    if (chunk.type !== "log" && chunk.type !== "error" && chunk.type !== "result") {
      throw new SandboxError(
        SANDBOX_CODES.INVALID_OPTIONS,
        "ResultStreamer.pushChunk: chunk.type must be log, error or result; end the stream with complete(result)",
        { details: { field: "chunk.type" } },
      );
    }
    this.stamp("pushChunk", chunk);
  }

  /** Queue the final `complete` chunk, flush everything and close the stream. */
  complete(result: SandboxResult): void {
    this.assertOpen("complete");
    this.buffer.push({ type: "complete", data: result, timestamp: this.clock() });
    this.state = "completed";
    this.stopTimer();
    try {
      this.flush();
    } finally {
      this.listeners.clear();
      for (const queue of this.iterators) queue.end();
    }
  }

  /** Deliver every buffered chunk to every subscriber now, in push order. */
  flush(): void {
    if (this.buffer.length === 0) return;
    const chunks = this.buffer;
    this.buffer = [];
    const listeners = [...this.listeners];
    const errors: unknown[] = [];
    for (const chunk of chunks) {
      for (const queue of this.iterators) queue.put(chunk);
      for (const listener of listeners) {
        try {
          listener(chunk);
        } catch (error) {
          errors.push(error);
        }
      }
    }
    if (errors.length === 0) return;
    if (this.onListenerError !== undefined) {
      for (const error of errors) this.onListenerError(error);
      return;
    }
    throw errors.length === 1
      ? errors[0]
      : new AggregateError(errors, "ResultStreamer: several listeners threw");
  }

  /**
   * Flush what is buffered and stop the interval timer. Later pushes are still
   * accepted but delivered only by {@link flush}, a full buffer or {@link complete}.
   */
  stop(): void {
    if (this.state === "open") this.state = "stopped";
    this.stopTimer();
    this.flush();
  }

  /** Drop buffered chunks undelivered, remove every subscriber, end every iterator and close. Idempotent. */
  destroy(): void {
    if (this.state === "destroyed") return;
    this.state = "destroyed";
    this.stopTimer();
    this.buffer = [];
    this.listeners.clear();
    for (const queue of this.iterators) queue.end();
  }

  /** Same as {@link destroy}. */
  [Symbol.dispose](): void {
    this.destroy();
  }

  /**
   * Iterate chunks flushed from now on; the iteration ends after the
   * `complete` chunk (or on destroy). Each iterator holds at most
   * `maxPendingChunks` unread chunks, then fails with `SANDBOX_STREAM_CLOSED`.
   */
  [Symbol.asyncIterator](): AsyncIterableIterator<StreamChunk> {
    const queue = new ChunkQueue(this.maxPendingChunks, () => this.iterators.delete(queue));
    if (this.closed) queue.end();
    else this.iterators.add(queue);
    return queue;
  }

  /** This streamer as an `AsyncIterable` (for APIs that want a plain iterable object). */
  toAsyncIterable(): AsyncIterable<StreamChunk> {
    return { [Symbol.asyncIterator]: () => this[Symbol.asyncIterator]() };
  }

  private stamp(method: string, chunk: PushableChunk): void {
    this.assertOpen(method);
    this.push({ ...chunk, timestamp: this.clock() } as StreamChunk);
  }

  private push(chunk: StreamChunk): void {
    this.buffer.push(chunk);
    if (this.state === "open" && this.timer === undefined) {
      this.timer = setInterval(() => this.flush(), this.flushIntervalMs);
      this.timer.unref();
    }
    if (this.buffer.length >= this.maxBufferSize) this.flush();
  }

  private assertOpen(method: string): void {
    if (!this.closed) return;
    const why = this.state === "completed" ? "after complete()" : "after destroy()";
    throw new SandboxError(
      SANDBOX_CODES.STREAM_CLOSED,
      `ResultStreamer.${method}: the stream is closed (${why}); use a new ResultStreamer for each execution`,
      { details: { method, state: this.state } },
    );
  }

  private stopTimer(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** One iterator's bounded queue of unread chunks. */
class ChunkQueue implements AsyncIterableIterator<StreamChunk> {
  private readonly items: StreamChunk[] = [];
  private readonly waiters: Array<{
    resolve: (result: IteratorResult<StreamChunk>) => void;
    reject: (error: unknown) => void;
  }> = [];
  private ended = false;
  private failure: SandboxError | undefined;

  constructor(
    private readonly limit: number,
    private readonly detach: () => void,
  ) {}

  put(chunk: StreamChunk): void {
    if (this.ended) return;
    const waiter = this.waiters.shift();
    if (waiter !== undefined) {
      waiter.resolve({ value: chunk, done: false });
    } else if (this.items.length >= this.limit) {
      this.items.length = 0;
      this.failure = new SandboxError(
        SANDBOX_CODES.STREAM_CLOSED,
        `ResultStreamer iterator: more than ${this.limit} chunks were left unread, so the iterator was closed; ` +
          "read faster or raise maxPendingChunks",
        { details: { maxPendingChunks: this.limit } },
      );
      this.end();
      return;
    } else {
      this.items.push(chunk);
    }
    if (chunk.type === "complete") this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.detach();
    // Waiters exist only while `items` is empty: settle them now.
    for (const waiter of this.waiters.splice(0)) {
      const failure = this.takeFailure();
      if (failure !== undefined) waiter.reject(failure);
      else waiter.resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<StreamChunk>> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve({ value: item, done: false });
    const failure = this.takeFailure();
    if (failure !== undefined) return Promise.reject(failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
    });
  }

  return(): Promise<IteratorResult<StreamChunk>> {
    this.items.length = 0;
    this.failure = undefined;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<StreamChunk> {
    return this;
  }

  private takeFailure(): SandboxError | undefined {
    const failure = this.failure;
    this.failure = undefined;
    return failure;
  }
}

function positiveInteger(field: string, value: number): number {
  if (Number.isSafeInteger(value) && value > 0) return value;
  throw new SandboxError(
    SANDBOX_CODES.INVALID_CONFIG,
    `ResultStreamer: ${field} must be a positive integer (got ${String(value)})`,
    { details: { field } },
  );
}

function optionalFunction<T>(field: string, value: T | undefined): T | undefined {
  if (value === undefined || typeof value === "function") return value;
  throw new SandboxError(
    SANDBOX_CODES.INVALID_CONFIG,
    `ResultStreamer: ${field} must be a function (got ${value === null ? "null" : typeof value})`,
    { details: { field } },
  );
}
