import { types } from "node:util";

const { getPrototypeOf } = Object;
const { isProxy } = types;
const HostPromisePrototype = Promise.prototype;

type Listener = (reason: unknown) => void;

/** Live realms: their context's `Promise.prototype`, captured before guest code ran, and who to tell. */
const realms = new Map<object, Listener>();
let installed = false;
let removal: NodeJS.Immediate | undefined;

/** Which realm a rejected promise belongs to: `undefined` for a host promise, `null` for an unknown guest one. */
function ownerOf(promise: unknown): Listener | null | undefined {
  if (typeof promise !== "object" || promise === null || isProxy(promise)) return null;
  // Walk prototypes without running guest code: a proxy anywhere on the chain stops the walk.
  for (let proto = getPrototypeOf(promise); proto !== null; proto = getPrototypeOf(proto)) {
    if (proto === HostPromisePrototype) return undefined;
    const listener = realms.get(proto);
    if (listener !== undefined) return listener;
    if (isProxy(proto)) return null;
  }
  return null;
}

function onUnhandledRejection(reason: unknown, promise: Promise<unknown>): void {
  const owner = ownerOf(promise);
  if (owner === null) return; // a guest promise with a stripped prototype: never the host's problem
  if (owner !== undefined) {
    owner(reason);
    return;
  }
  // A host promise. With other listeners, they decide; alone, do what node's mode would have done.
  if (process.listenerCount("unhandledRejection") > 1) return;
  emulateDefault(reason);
}

/** Node's `--unhandled-rejections` behaviour for a host rejection that only our listener saw. */
function emulateDefault(reason: unknown): void {
  const flag = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)]
    .find((arg) => arg.startsWith("--unhandled-rejections="))
    ?.slice("--unhandled-rejections=".length);
  const mode = flag ?? "throw";
  if (mode === "none") return;
  if (mode === "warn" || mode === "warn-with-error-code") {
    process.emitWarning(
      `Unhandled promise rejection: ${reason instanceof Error ? reason.stack : String(reason)}`,
    );
    if (mode === "warn-with-error-code") process.exitCode = 1;
    return;
  }
  if (reason instanceof Error) throw reason;
  const error = new Error(
    `This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "${String(reason)}".`,
  );
  (error as Error & { code: string }).code = "ERR_UNHANDLED_REJECTION";
  throw error;
}

/**
 * Route unhandled rejections of a `node:vm` context's promises to its realm,
 * so a guest's `Promise.reject()` fails the guest's run instead of ending the
 * host process through node's default mode. The process listener exists only
 * while some realm is live (and one macrotask after, for the last reports);
 * host rejections seen meanwhile get node's own behaviour.
 *
 * Returns the function that stops tracking this realm.
 */
export function trackUnhandledRejections(
  promisePrototype: object | undefined,
  listener: Listener,
): () => void {
  if (promisePrototype === undefined) return () => {};
  realms.set(promisePrototype, listener);
  if (removal !== undefined) {
    clearImmediate(removal);
    removal = undefined;
  }
  if (!installed) {
    process.on("unhandledRejection", onUnhandledRejection);
    installed = true;
  }
  return () => {
    if (!realms.delete(promisePrototype) || realms.size > 0 || removal !== undefined) return;
    removal = setImmediate(() => {
      removal = undefined;
      if (realms.size === 0 && installed) {
        process.off("unhandledRejection", onUnhandledRejection);
        installed = false;
      }
    }).unref();
  };
}
