/** Bounds how many calls run at once; the rest wait in arrival order. */
export interface CallSlots {
  /** Wait for a slot; resolves a release function, or `undefined` when `signal` aborted first. */
  acquire(signal?: AbortSignal): Promise<(() => void) | undefined>;
}

/** A counting semaphore with `size` slots (FIFO; a waiter whose signal aborts leaves the queue). */
export function createCallSlots(size: number): CallSlots {
  let free = size;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) free++;
    else next();
  };
  const once = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      release();
    };
  };
  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.resolve(undefined);
      if (free > 0) {
        free--;
        return Promise.resolve(once());
      }
      return new Promise((resolve) => {
        const grant = (): void => {
          signal?.removeEventListener("abort", leave);
          resolve(once());
        };
        const leave = (): void => {
          const at = waiting.indexOf(grant);
          if (at !== -1) waiting.splice(at, 1);
          resolve(undefined);
        };
        waiting.push(grant);
        signal?.addEventListener("abort", leave, { once: true });
      });
    },
  };
}
