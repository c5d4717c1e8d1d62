/**
 * The guest-realm half of the runner. {@link guestBootstrap} is never called
 * in the runner's own realm: its source text is compiled inside the fresh
 * `vm` context (before any guest code runs) and called once with the host
 * bridge. Everything it needs is captured from the context's pristine
 * intrinsics at that moment, so later tampering by guest code (patched
 * prototypes, replaced `JSON`) cannot change how results are encoded.
 *
 * Rules that keep host objects out of the guest realm:
 * - the bridge takes and returns primitives only, and never throws;
 * - the bridge lives in this closure, never on a guest-visible object;
 * - every value handed to guest code (console, timers, modules, context) is
 *   created here, in the guest realm.
 *
 * The function must stay self-contained: no imports, no references to
 * module-level names, because only its source text crosses into the context.
 */

/** Primitive-only call from the guest realm into the runner. Never throws. */
export type HostBridge = (op: string, a?: string | number, b?: string | number) => number | undefined;

/** What the bootstrap hands back to the runner (guest-realm functions). */
export interface GuestApi {
  /** Define each own key of the JSON object text as a writable global. */
  installGlobals(json: string): void;
  /** Define global `name`: `exportsJson` parsed, then `factory(module, exports)` run when given. */
  loadModule(name: string, exportsJson: string | undefined, factory: unknown): void;
  /** Run the callback of timer `id` (one-shot timers are forgotten first). */
  fireTimer(id: number): void;
  /** Await `value` and report it through the bridge as `done`. */
  settle(value: unknown): void;
  /** A one-line description of a thrown value, never a stack trace. */
  describe(value: unknown): string;
}

/**
 * Build the guest-visible console, timers and module loader, and return the
 * runner's handles. Compiled and called inside the context; see the module doc.
 */
export function guestBootstrap(host: HostBridge): GuestApi {
  const g = globalThis as unknown as Record<string, unknown>;
  const { apply, defineProperty } = Reflect;
  const objectKeys = Object.keys;
  const isArray = Array.isArray;
  const jsonParse = JSON.parse;
  const jsonStringify = JSON.stringify;
  const NativePromise = Promise;
  const promiseResolve = Promise.resolve;
  const promiseThen = Promise.prototype.then;
  const objectToString = Object.prototype.toString;
  const NativeMap = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const NativeTypeError = TypeError;
  const NativeString = String;
  const NativeNumber = Number;
  const MAX_DELAY_MS = 2_147_483_647;

  function safeGet(target: object, key: string): unknown {
    try {
      return (target as Record<string, unknown>)[key];
    } catch {
      return undefined;
    }
  }

  function isError(value: unknown): value is object {
    if (typeof value !== "object" || value === null) return false;
    try {
      return apply(objectToString, value, []) === "[object Error]";
    } catch {
      return false;
    }
  }

  function describeError(error: object): string {
    const name = safeGet(error, "name");
    const message = safeGet(error, "message");
    const nameText = typeof name === "string" && name !== "" ? name : "Error";
    return typeof message === "string" && message !== "" ? nameText + ": " + message : nameText;
  }

  function formatValue(value: unknown): string {
    const type = typeof value;
    if (type === "string") return value as string;
    if (type === "function") {
      const name = safeGet(value as object, "name");
      return typeof name === "string" && name !== "" ? "[Function: " + name + "]" : "[Function (anonymous)]";
    }
    if (type === "bigint") return NativeString(value) + "n";
    if (type !== "object" || value === null) {
      try {
        return NativeString(value);
      } catch {
        return type;
      }
    }
    if (isError(value)) return describeError(value as object);
    try {
      const text = jsonStringify(value);
      if (typeof text === "string") return text;
    } catch {
      // cyclic or BigInt inside: fall through to the tag
    }
    try {
      return apply(objectToString, value, []) as string;
    } catch {
      return "[object]";
    }
  }

  function describe(value: unknown): string {
    try {
      return isError(value) ? describeError(value as object) : formatValue(value);
    } catch {
      return "exception (it could not be described)";
    }
  }

  // ── console ───────────────────────────────────────────────────────────
  // The bridge answers 0 once the output budget is spent; later lines are not even formatted.
  let logsOpen = true;
  function makeLogger(level: string) {
    return function log(...args: unknown[]): void {
      if (!logsOpen) return;
      let message = "";
      for (let i = 0; i < args.length; i++) message += (i === 0 ? "" : " ") + formatValue(args[i]);
      if (host("log", level, message) === 0) logsOpen = false;
    };
  }
  const console = {
    log: makeLogger("log"),
    info: makeLogger("info"),
    warn: makeLogger("warn"),
    error: makeLogger("error"),
    debug: makeLogger("debug"),
  };

  // ── timers ────────────────────────────────────────────────────────────
  interface TimerEntry {
    fn: (...args: unknown[]) => unknown;
    args: unknown[];
    repeat: boolean;
  }
  const timers = new NativeMap<number, TimerEntry>();

  function toDelay(delay: unknown): number {
    const ms = NativeNumber(delay);
    return ms >= 1 && ms <= MAX_DELAY_MS ? ms : 1;
  }

  function addTimer(fn: unknown, delay: unknown, args: unknown[], repeat: boolean): number {
    if (typeof fn !== "function")
      throw new NativeTypeError('The "callback" argument must be of type function');
    const id = host("setTimer", toDelay(delay), repeat ? 1 : 0);
    if (typeof id !== "number") return 0;
    apply(mapSet, timers, [id, { fn, args, repeat }]);
    return id;
  }

  function clearTimer(id: unknown): void {
    if (typeof id === "number" && apply(mapDelete, timers, [id])) host("clearTimer", id);
  }

  function fireTimer(id: number): void {
    const entry = apply(mapGet, timers, [id]) as TimerEntry | undefined;
    if (entry === undefined) return;
    if (!entry.repeat) apply(mapDelete, timers, [id]);
    try {
      apply(entry.fn, undefined, entry.args);
    } catch (error) {
      host("fail", describe(error));
    }
  }

  const globals: Record<string, unknown> = {
    console,
    setTimeout: function setTimeout(fn: unknown, delay?: unknown, ...args: unknown[]): number {
      return addTimer(fn, delay, args, false);
    },
    setInterval: function setInterval(fn: unknown, delay?: unknown, ...args: unknown[]): number {
      return addTimer(fn, delay, args, true);
    },
    clearTimeout: function clearTimeout(id?: unknown): void {
      clearTimer(id);
    },
    clearInterval: function clearInterval(id?: unknown): void {
      clearTimer(id);
    },
    queueMicrotask: function queueMicrotask(fn: unknown): void {
      if (typeof fn !== "function")
        throw new NativeTypeError('The "callback" argument must be of type function');
      const run = (): void => {
        try {
          apply(fn, undefined, []);
        } catch (error) {
          host("fail", describe(error));
        }
      };
      apply(promiseThen, apply(promiseResolve, NativePromise, []), [run]);
    },
  };
  const globalNames = objectKeys(globals);
  for (let i = 0; i < globalNames.length; i++) {
    const name = globalNames[i] as string;
    defineProperty(g, name, { value: globals[name], writable: true, configurable: true, enumerable: false });
  }

  // ── results ───────────────────────────────────────────────────────────
  const SKIP = {};
  const UNTRANSFERABLE = {};
  let untransferableKind = "";

  function refuse(kind: string): never {
    untransferableKind = kind;
    throw UNTRANSFERABLE;
  }

  /** JSON text of `value`, or SKIP for `undefined`; refuses functions, symbols, BigInts and cycles. */
  function encode(value: unknown, ancestors: unknown[]): string | typeof SKIP {
    if (value === null) return "null";
    const type = typeof value;
    if (type === "string" || type === "number") return jsonStringify(value) as string;
    if (type === "boolean") return value ? "true" : "false";
    if (type === "undefined") return SKIP;
    if (type !== "object") refuse(type);
    for (let i = 0; i < ancestors.length; i++) if (ancestors[i] === value) refuse("cyclic");
    const object = value as Record<string, unknown>;
    if (!isArray(object)) {
      const toJSON = object.toJSON;
      if (typeof toJSON === "function") return encode(apply(toJSON, object, [""]), ancestors);
    }
    ancestors[ancestors.length] = object;
    let text: string;
    if (isArray(object)) {
      text = "[";
      const length = object.length;
      for (let i = 0; i < length; i++) {
        const item = encode(object[i], ancestors);
        text += (i === 0 ? "" : ",") + (item === SKIP ? "null" : (item as string));
      }
      text += "]";
    } else {
      text = "{";
      const keys = objectKeys(object);
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const item = encode(object[key], ancestors);
        if (item === SKIP) continue;
        text += (first ? "" : ",") + jsonStringify(key) + ":" + (item as string);
        first = false;
      }
      text += "}";
    }
    ancestors.length--;
    return text;
  }

  function onFulfilled(value: unknown): void {
    let text: string | typeof SKIP;
    try {
      text = encode(value, []);
    } catch (error) {
      if (error === UNTRANSFERABLE)
        host("done", "transfer", "result is not transferable: " + untransferableKind);
      else host("done", "error", describe(error));
      return;
    }
    if (text === SKIP) host("done", "undefined");
    else host("done", "ok", text as string);
  }

  function onRejected(error: unknown): void {
    host("done", "error", describe(error));
  }

  function settle(value: unknown): void {
    try {
      const promise = apply(promiseResolve, NativePromise, [value]);
      apply(promiseThen, promise, [onFulfilled, onRejected]);
    } catch (error) {
      onRejected(error);
    }
  }

  // ── context and modules ───────────────────────────────────────────────
  function defineGlobal(name: string, value: unknown, enumerable: boolean): void {
    defineProperty(g, name, { value, writable: true, configurable: true, enumerable });
  }

  function installGlobals(json: string): void {
    const values = jsonParse(json) as Record<string, unknown>;
    const names = objectKeys(values);
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      defineGlobal(name, values[name], true);
    }
  }

  function loadModule(name: string, exportsJson: string | undefined, factory: unknown): void {
    const module = { exports: exportsJson === undefined ? {} : jsonParse(exportsJson) };
    if (typeof factory === "function") apply(factory, undefined, [module, module.exports]);
    defineGlobal(name, module.exports, false);
  }

  return { installGlobals, loadModule, fireTimer, settle, describe };
}
