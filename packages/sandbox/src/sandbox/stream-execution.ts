import type { LogEntry, SandboxResult } from "@suaveplan/sandbox-core/types";

/** A chunk of {@link Sandbox.executeStream}: console lines as they happen, then exactly one `complete`. */
export type SandboxStreamChunk =
  | { type: "log"; data: LogEntry; timestamp: number }
  | { type: "complete"; data: SandboxResult; timestamp: number };

/**
 * Run `start` lazily when iteration begins and yield each console line the
 * moment the engine reports it, then the result. Leaving the loop early stops
 * delivery (the execution itself still ends by its own timeout).
 */
export function streamExecution(
  start: (onLog: (entry: LogEntry) => void) => Promise<SandboxResult>,
): AsyncIterable<SandboxStreamChunk> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<SandboxStreamChunk> {
      const queue: SandboxStreamChunk[] = [];
      let wake: (() => void) | undefined;
      let done = false;
      let failure: { error: unknown } | undefined;
      let closed = false;
      const push = (chunk: SandboxStreamChunk) => {
        if (closed) return;
        queue.push(chunk);
        wake?.();
      };
      start((entry) => push({ type: "log", data: entry, timestamp: Date.now() })).then(
        (result) => {
          push({ type: "complete", data: result, timestamp: Date.now() });
          done = true;
          wake?.();
        },
        (error: unknown) => {
          failure = { error };
          done = true;
          wake?.();
        },
      );
      return {
        async next(): Promise<IteratorResult<SandboxStreamChunk>> {
          for (;;) {
            const chunk = queue.shift();
            if (chunk) return { value: chunk, done: false };
            if (failure) throw failure.error;
            if (done || closed) return { value: undefined, done: true };
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
            wake = undefined;
          }
        },
        async return(): Promise<IteratorResult<SandboxStreamChunk>> {
          closed = true;
          queue.length = 0;
          return { value: undefined, done: true };
        },
      };
    },
  };
}
