import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";

/** A chunk of {@link Sandbox.executeStream}: console lines as they happen, then exactly one `complete`. */
export type SandboxStreamChunk =
  | { type: "log"; data: LogEntry; timestamp: number }
  | { type: "complete"; data: SandboxResult; timestamp: number };

/**
 * Run `start` lazily when iteration begins and yield each console line the
 * moment the engine reports it, then the result. Leaving the loop early
 * (`break`, `return()`) stops delivery and settles every pending `next()` at
 * once; the execution itself still ends by its own timeout (or `destroy()`).
 * Concurrent `next()` calls are answered in call order.
 */
export function streamExecution(
  start: (onLog: (entry: LogEntry) => void) => Promise<SandboxResult>,
): AsyncIterable<SandboxStreamChunk> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<SandboxStreamChunk> {
      const queue: SandboxStreamChunk[] = [];
      /** Pending `next()` calls, oldest first; each is woken to re-check the state. */
      const waiters: Array<() => void> = [];
      let done = false;
      let failure: { error: unknown } | undefined;
      let closed = false;
      const wakeAll = () => {
        for (const wake of waiters.splice(0)) wake();
      };
      const push = (chunk: SandboxStreamChunk) => {
        if (closed) return;
        queue.push(chunk);
        wakeAll();
      };
      start((entry) => push({ type: "log", data: entry, timestamp: Date.now() })).then(
        (result) => {
          push({ type: "complete", data: result, timestamp: Date.now() });
          done = true;
          wakeAll();
        },
        (error: unknown) => {
          failure = { error };
          done = true;
          wakeAll();
        },
      );
      // Serialise next() calls so concurrent callers get chunks in call order.
      let previous: Promise<unknown> = Promise.resolve();
      const pull = async (): Promise<IteratorResult<SandboxStreamChunk>> => {
        for (;;) {
          const chunk = queue.shift();
          if (chunk) return { value: chunk, done: false };
          if (closed) return { value: undefined, done: true };
          if (failure) {
            const { error } = failure;
            failure = undefined;
            closed = true;
            throw error;
          }
          if (done) return { value: undefined, done: true };
          await new Promise<void>((resolve) => waiters.push(resolve));
        }
      };
      return {
        next(): Promise<IteratorResult<SandboxStreamChunk>> {
          const result = previous.then(pull, pull);
          previous = result.catch(() => undefined);
          return result;
        },
        async return(): Promise<IteratorResult<SandboxStreamChunk>> {
          closed = true;
          queue.length = 0;
          wakeAll();
          return { value: undefined, done: true };
        },
      };
    },
  };
}
