/** `promise`'s value, or `fallback` when it rejects or takes longer than `ms` (Redis unreachable). */
export function bounded<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  return Promise.race([promise.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

/** Whether `promise` settled (a rejection counts) within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return bounded(
    promise.then(
      () => true,
      () => true,
    ),
    ms,
    false,
  );
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How long closing waits for each part that talks to Redis (longer only when Redis is gone). */
export const CLOSE_MARGIN_MS = 3000;
