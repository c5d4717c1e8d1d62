/**
 * Defence in depth for the worker's own realm (the guest runs in a `node:vm`
 * context inside it): should a worker-realm object ever reach guest code, its
 * `constructor.constructor` must not be a code-generating `Function`. Replaces
 * the `constructor` of every function kind's prototype with a function that
 * throws. Called once, first thing in the worker entry; nothing in the worker
 * generates code from strings.
 */
export function hardenWorkerRealm(): void {
  const refuse = function constructorDisabled(): never {
    throw new TypeError("Function constructors are disabled in the sandbox worker");
  };
  const kinds = [() => {}, async () => {}, function* () {}, async function* () {}];
  for (const fn of kinds) {
    Object.defineProperty(Object.getPrototypeOf(fn), "constructor", {
      value: refuse,
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }
}
