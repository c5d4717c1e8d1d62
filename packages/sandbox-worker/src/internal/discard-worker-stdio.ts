/**
 * Make the worker's `process.stdout` and `process.stderr` drop what is
 * written to them (the guest never reaches them; this covers Node's own
 * warnings). Called first thing in the worker entry. The host leaves the
 * worker's stdio at Node's default (piped to its own, without a ref): reading
 * it on the host (`stdout: true` and `resume()`) refs the worker's internal
 * port until the worker exits, so an idle spare kept the process alive.
 */
export function discardWorkerStdio(): void {
  for (const stream of [process.stdout, process.stderr]) {
    Object.defineProperty(stream, "write", {
      value: function discarded(_chunk: unknown, ...rest: unknown[]): boolean {
        const callback = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
        if (callback !== undefined) queueMicrotask(callback);
        return true;
      },
      writable: false,
      configurable: false,
    });
  }
}
