import type { GuestKernel, KernelOutcome } from "./protocol.js";

/** File name guest code is compiled under (the only frames a guest stack shows). */
export const GUEST_FILENAME = "sandbox.js";
/** File name prefix of registered module sources. */
export const GUEST_MODULE_FILENAME_PREFIX = "sandbox-module:";

/**
 * The guest-side half of the worker: console, timers, value copying and the
 * stack-trace filter, all created INSIDE the guest's `vm` context so that no
 * worker-realm object (whose `constructor.constructor` would be the worker's
 * own, code-generating `Function`) is ever reachable from guest code.
 *
 * The worker evaluates `"use strict";(${guestKernel.toString()})` in the
 * context, so this function must be fully self-contained: it may use only its
 * parameters and the context's own built-ins, never a module-level binding.
 * Intrinsics are captured on entry, before any guest code runs; guest code
 * that later tampers with prototypes cannot redirect the kernel.
 *
 * The five parameters are worker-realm bridge functions. They stay in this
 * closure, are only ever called directly with primitives, and never throw.
 */
export function guestKernel(
  log: (level: number, message: string) => boolean,
  setTimer: (id: number, delayMs: number, repeat: boolean) => void,
  clearTimer: (id: number) => void,
  settled: () => void,
  uncaught: (message: string) => void,
): GuestKernel {
  // ---- intrinsics, captured before any guest code runs -------------------
  const { apply, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, ownKeys } = Reflect;
  const setPrototypeOf = Object.setPrototypeOf;
  const objectIs = Object.is;
  const isArray = Array.isArray;
  const isView = ArrayBuffer.isView;
  const ObjectToString = Object.prototype.toString;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const promiseResolve = Promise.resolve;
  const promiseThen = Promise.prototype.then;
  const MapCtor = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapHas = Map.prototype.has;
  const mapDelete = Map.prototype.delete;
  const mapForEach = Map.prototype.forEach;
  const mapSize = getOwnPropertyDescriptor(Map.prototype, "size")?.get;
  const SetCtor = Set;
  const setAdd = Set.prototype.add;
  const setHas = Set.prototype.has;
  const setDelete = Set.prototype.delete;
  const setForEach = Set.prototype.forEach;
  const setSize = getOwnPropertyDescriptor(Set.prototype, "size")?.get;
  const DateCtor = Date;
  const dateGetTime = Date.prototype.getTime;
  const dateToISOString = Date.prototype.toISOString;
  const RegExpCtor = RegExp;
  const regExpSource = getOwnPropertyDescriptor(RegExp.prototype, "source")?.get;
  const regExpFlags = getOwnPropertyDescriptor(RegExp.prototype, "flags")?.get;
  const ArrayBufferCtor = ArrayBuffer;
  const arrayBufferSlice = ArrayBuffer.prototype.slice;
  const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")?.get;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as Uint8Array;
  const typedArrayByteLength = getOwnPropertyDescriptor(TypedArrayPrototype, "byteLength")?.get;
  const typedArrayTag = getOwnPropertyDescriptor(TypedArrayPrototype, Symbol.toStringTag)?.get;
  const symbolToString = Symbol.prototype.toString;
  const stringReplace = String.prototype.replace;
  const stringStartsWith = String.prototype.startsWith;
  const stringCharAt = String.prototype.charAt;
  const regExpTest = RegExp.prototype.test;
  const mathTrunc = Math.trunc;
  const jsonStringify = JSON.stringify;
  const NumberCtor = Number;
  const numberIsNaN = Number.isNaN;
  const Uint8ArrayCtor = Uint8Array;
  const typedArraySet = TypedArrayPrototype.set;
  const FORMAT_TOKEN = /%[sdifjoOc%]/g;
  const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const QUOTE = /[\\']/g;
  const NEWLINE = /\n/g;
  const typedArrays: Record<string, new (source: unknown) => unknown> = setPrototypeOf(
    {
      Int8Array,
      Uint8Array,
      Uint8ClampedArray,
      Int16Array,
      Uint16Array,
      Int32Array,
      Uint32Array,
      Float32Array,
      Float64Array,
      BigInt64Array,
      BigUint64Array,
    },
    null,
  );
  const MAX_ITEMS = 100;
  const MAX_DEPTH = 2;
  const TIMEOUT_MAX_MS = 2_147_483_647;

  /** `fn.call(self, ...args)` without looking anything up on `fn`. */
  const call = (fn: unknown, self: unknown, ...args: unknown[]): unknown =>
    apply(fn as (...a: unknown[]) => unknown, self, args);
  /** A null-prototype record, so the worker never reads through a (tamperable) prototype. */
  const record = <T extends object>(value: T): T => setPrototypeOf(value, null);
  const brand = (getter: unknown, value: unknown): boolean => {
    try {
      call(getter, value);
      return true;
    } catch {
      return false;
    }
  };
  const isDate = (value: object): boolean => brand(dateGetTime, value);
  const isRegExp = (value: object): boolean => brand(regExpSource, value) && value !== RegExpCtor.prototype;
  const isMap = (value: object): boolean => brand(mapSize, value);
  const isSet = (value: object): boolean => brand(setSize, value);
  const isArrayBuffer = (value: object): boolean => brand(arrayBufferByteLength, value);
  const tagOfTypedArray = (value: object): string | undefined =>
    isView(value) ? (call(typedArrayTag, value) as string | undefined) : undefined;
  const isErrorLike = (value: object): boolean => call(ObjectToString, value) === "[object Error]";

  // ---- describing values -------------------------------------------------
  const quote = (text: string): string =>
    `'${call(stringReplace, call(stringReplace, text, QUOTE, "\\$&"), NEWLINE, "\\n")}'`;

  const errorHeader = (error: object): string => {
    let name: unknown;
    let message: unknown;
    try {
      name = (error as { name?: unknown }).name;
      message = (error as { message?: unknown }).message;
    } catch {
      return "Error";
    }
    const label = typeof name === "string" && name !== "" ? name : "Error";
    return typeof message === "string" && message !== "" ? `${label}: ${message}` : label;
  };

  const inspect = (value: unknown, depth: number, seen: Set<unknown>): string => {
    switch (typeof value) {
      case "string":
        return depth === 0 ? value : quote(value);
      case "number":
        return objectIs(value, -0) ? "-0" : `${value}`;
      case "bigint":
        return `${value}n`;
      case "boolean":
      case "undefined":
        return `${value}`;
      case "symbol":
        return call(symbolToString, value) as string;
      case "function": {
        const named = getOwnPropertyDescriptor(value, "name");
        const name = named !== undefined && typeof named.value === "string" ? named.value : "";
        return `[Function: ${name === "" ? "(anonymous)" : name}]`;
      }
    }
    if (value === null) return "null";
    const object = value as object;
    if (call(setHas, seen, object)) return "[Circular]";
    if (isErrorLike(object)) {
      const stack = getOwnPropertyDescriptor(object, "stack");
      return stack !== undefined && typeof stack.value === "string" ? stack.value : errorHeader(object);
    }
    if (isDate(object)) {
      const time = call(dateGetTime, object) as number;
      return numberIsNaN(time) ? "Invalid Date" : (call(dateToISOString, object) as string);
    }
    if (isRegExp(object)) return `/${call(regExpSource, object)}/${call(regExpFlags, object)}`;
    if (depth >= MAX_DEPTH) return isArray(object) ? "[Array]" : "[Object]";
    call(setAdd, seen, object);
    try {
      let body = "";
      let count = 0;
      const add = (part: string): void => {
        body += count === 0 ? part : `, ${part}`;
        count++;
      };
      if (isArray(object)) {
        const length = (object as unknown[]).length;
        for (let i = 0; i < length && i < MAX_ITEMS; i++)
          add(inspect(readOwn(object, `${i}`), depth + 1, seen));
        if (length > MAX_ITEMS) add(`... ${length - MAX_ITEMS} more items`);
        return count === 0 ? "[]" : `[ ${body} ]`;
      }
      if (isMap(object) || isSet(object)) {
        const map = isMap(object);
        call(map ? mapForEach : setForEach, object, (entry: unknown, key: unknown) => {
          if (count < MAX_ITEMS) {
            const shown = inspect(entry, depth + 1, seen);
            add(map ? `${inspect(key, depth + 1, seen)} => ${shown}` : shown);
          }
        });
        const size = call(map ? mapSize : setSize, object) as number;
        return `${map ? "Map" : "Set"}(${size}) {${count === 0 ? "" : ` ${body} `}}`;
      }
      const keys = ownKeys(object);
      for (let i = 0; i < keys.length && count < MAX_ITEMS; i++) {
        const key = keys[i];
        if (typeof key !== "string") continue;
        const descriptor = getOwnPropertyDescriptor(object, key);
        if (descriptor === undefined || descriptor.enumerable !== true) continue;
        const shown = "value" in descriptor ? inspect(descriptor.value, depth + 1, seen) : "[Getter/Setter]";
        add(`${call(regExpTest, IDENTIFIER, key) ? key : quote(key)}: ${shown}`);
      }
      return count === 0 ? "{}" : `{ ${body} }`;
    } finally {
      call(setDelete, seen, object);
    }
  };

  /** An own data property's value, without running accessors (for display only). */
  const readOwn = (object: object, key: string): unknown => {
    const descriptor = getOwnPropertyDescriptor(object, key);
    if (descriptor === undefined) return undefined;
    return "value" in descriptor ? descriptor.value : "[Getter/Setter]";
  };

  /**
   * A thrown or rejected guest value as one line: `Name: message` for errors,
   * `String(value)` for primitives, JSON for other objects (never a stack).
   */
  const describe = (value: unknown): string => {
    try {
      if (value === null || (typeof value !== "object" && typeof value !== "function")) {
        return typeof value === "symbol" ? (call(symbolToString, value) as string) : `${value}`;
      }
      const message = (value as { message?: unknown }).message;
      if (typeof message === "string") return errorHeader(value);
      if (typeof value === "object") {
        try {
          const json = jsonStringify(value);
          if (typeof json === "string") return json;
        } catch {
          // cyclic or BigInt: fall back to the console rendering
        }
      }
      return inspect(value, 1, new SetCtor());
    } catch {
      return "an exception that could not be described";
    }
  };

  const format = (args: unknown[]): string => {
    let text = "";
    let start = 0;
    const first = args[0];
    if (typeof first === "string" && args.length > 1) {
      let next = 1;
      text = call(stringReplace, first, FORMAT_TOKEN, (token: string) => {
        if (token === "%%") return "%";
        if (next >= args.length) return token;
        const arg = args[next++];
        switch (call(stringCharAt, token, 1)) {
          case "s":
            return typeof arg === "string" ? arg : inspect(arg, 1, new SetCtor());
          case "d":
          case "i":
            return typeof arg === "bigint"
              ? `${arg}n`
              : `${token === "%i" ? mathTrunc(NumberCtor(arg)) : NumberCtor(arg)}`;
          case "f":
            return `${NumberCtor(arg)}`;
          case "c":
            return "";
          case "j":
            try {
              const json = jsonStringify(arg);
              return typeof json === "string" ? json : "undefined";
            } catch {
              return "[Circular]";
            }
          default:
            return inspect(arg, 1, new SetCtor());
        }
      }) as string;
      start = next;
    }
    for (let i = start; i < args.length; i++) {
      const arg = args[i];
      const part = typeof arg === "string" ? arg : inspect(arg, 0, new SetCtor());
      text = i === 0 ? part : `${text} ${part}`;
    }
    return text;
  };

  // ---- console -----------------------------------------------------------
  let outputOpen = true;
  const emit = (level: number, args: unknown[]): void => {
    if (!outputOpen) return;
    let text: unknown;
    try {
      text = format(args);
    } catch (error) {
      text = `[console argument could not be formatted: ${describe(error)}]`;
    }
    try {
      outputOpen = log(level, typeof text === "string" ? text : "[unprintable]") === true;
    } catch {
      outputOpen = false;
    }
  };
  const consoleObject = {
    log(...args: unknown[]): void {
      emit(0, args);
    },
    info(...args: unknown[]): void {
      emit(1, args);
    },
    warn(...args: unknown[]): void {
      emit(2, args);
    },
    error(...args: unknown[]): void {
      emit(3, args);
    },
    debug(...args: unknown[]): void {
      emit(4, args);
    },
    trace(...args: unknown[]): void {
      emit(4, args);
    },
  };

  // ---- timers ------------------------------------------------------------
  interface GuestTimer {
    fn: (...args: unknown[]) => unknown;
    args: unknown[];
    repeat: boolean;
  }
  const timers: Map<number, GuestTimer> = new MapCtor();
  let nextTimerId = 1;
  const addTimer = (fn: unknown, delay: unknown, args: unknown[], repeat: boolean): number => {
    if (typeof fn !== "function") {
      throw new TypeErrorCtor(
        `The "callback" argument must be of type function. Received ${inspect(fn, 1, new SetCtor())}`,
      );
    }
    let ms = NumberCtor(delay);
    if (!(ms >= 1 && ms <= TIMEOUT_MAX_MS)) ms = 1;
    const id = nextTimerId++;
    call(mapSet, timers, id, record({ fn: fn as GuestTimer["fn"], args, repeat }));
    try {
      setTimer(id, ms, repeat);
    } catch {
      // The bridge never throws; if it ever did, the timer simply never fires.
    }
    return id;
  };
  const removeTimer = (id: unknown): void => {
    if (typeof id !== "number") return;
    if (call(mapDelete, timers, id) === true) {
      try {
        clearTimer(id);
      } catch {
        // see addTimer
      }
    }
  };
  const reportUncaught = (error: unknown): void => {
    try {
      uncaught(describe(error));
    } catch {
      // see addTimer
    }
  };
  const resolved = (): Promise<void> => call(promiseResolve, PromiseCtor, undefined) as Promise<void>;
  const globals: Record<string, unknown> = {
    console: consoleObject,
    setTimeout: function setTimeout(fn: unknown, delay?: unknown, ...args: unknown[]): number {
      return addTimer(fn, delay, args, false);
    },
    setInterval: function setInterval(fn: unknown, delay?: unknown, ...args: unknown[]): number {
      return addTimer(fn, delay, args, true);
    },
    clearTimeout: function clearTimeout(id?: unknown): void {
      removeTimer(id);
    },
    clearInterval: function clearInterval(id?: unknown): void {
      removeTimer(id);
    },
    queueMicrotask: function queueMicrotask(fn: unknown): void {
      if (typeof fn !== "function") {
        throw new TypeErrorCtor(
          `The "callback" argument must be of type function. Received ${inspect(fn, 1, new SetCtor())}`,
        );
      }
      call(promiseThen, resolved(), () => {
        try {
          apply(fn as () => unknown, undefined, []);
        } catch (error) {
          reportUncaught(error);
        }
      });
    },
  };
  const globalKeys = ownKeys(globals);
  for (let i = 0; i < globalKeys.length; i++) {
    const key = globalKeys[i] as string;
    defineProperty(globalThis, key, {
      value: globals[key],
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  // ---- stack traces: guest frames only -----------------------------------
  const isGuestFrame = (frame: unknown): boolean => {
    try {
      const file = (frame as { getFileName(): unknown }).getFileName();
      return (
        typeof file === "string" &&
        (file === "sandbox.js" || (call(stringStartsWith, file, "sandbox-module:") as boolean))
      );
    } catch {
      return false;
    }
  };
  const prepareStackTrace = (error: unknown, frames: unknown[]): string => {
    let text = error !== null && typeof error === "object" ? errorHeader(error) : "Error";
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i];
      if (isGuestFrame(frame)) {
        try {
          text += `\n    at ${`${frame}`}`;
        } catch {
          // skip an unprintable frame
        }
      }
    }
    return text;
  };
  // Node consults `<realm>.Error.prepareStackTrace`; lock both so guest code can
  // neither read host frames (file paths) nor receive CallSite objects.
  defineProperty(ErrorCtor, "prepareStackTrace", {
    value: prepareStackTrace,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  defineProperty(globalThis, "Error", {
    value: ErrorCtor,
    writable: false,
    enumerable: false,
    configurable: false,
  });

  // ---- copying values in (worker realm → guest realm) --------------------
  const importValue = (value: unknown, memo: Map<unknown, unknown>): unknown => {
    if (value === null || typeof value !== "object") {
      return typeof value === "function" || typeof value === "symbol" ? undefined : value;
    }
    if (call(mapHas, memo, value)) return call(mapGet, memo, value);
    const remember = <T>(copy: T): T => {
      call(mapSet, memo, value, copy);
      return copy;
    };
    if (isArray(value)) {
      const copy = remember([] as unknown[]);
      const length = value.length;
      for (let i = 0; i < length; i++) {
        defineProperty(copy, i, {
          value: importValue(value[i], memo),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return copy;
    }
    if (isDate(value)) return remember(new DateCtor(call(dateGetTime, value) as number));
    if (isRegExp(value)) {
      return remember(
        new RegExpCtor(call(regExpSource, value) as string, call(regExpFlags, value) as string),
      );
    }
    if (isMap(value)) {
      const copy = remember(new MapCtor());
      call(mapForEach, value, (entry: unknown, key: unknown) => {
        call(mapSet, copy, importValue(key, memo), importValue(entry, memo));
      });
      return copy;
    }
    if (isSet(value)) {
      const copy = remember(new SetCtor());
      call(setForEach, value, (entry: unknown) => {
        call(setAdd, copy, importValue(entry, memo));
      });
      return copy;
    }
    const tag = tagOfTypedArray(value);
    if (tag !== undefined) {
      const Ctor = typedArrays[tag];
      if (Ctor !== undefined) return remember(new Ctor(value));
    }
    if (isArrayBuffer(value)) {
      const length = call(arrayBufferByteLength, value) as number;
      const copy = remember(new ArrayBufferCtor(length));
      call(typedArraySet, new Uint8ArrayCtor(copy), new Uint8ArrayCtor(value as ArrayBuffer));
      return copy;
    }
    const copy = remember(isErrorLike(value) ? new ErrorCtor(`${(value as Error).message}`) : {});
    if (isErrorLike(value)) {
      defineProperty(copy, "name", { value: `${(value as Error).name}`, writable: true, configurable: true });
    }
    const keys = ownKeys(value);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (typeof key !== "string") continue;
      const descriptor = getOwnPropertyDescriptor(value, key);
      if (descriptor === undefined || descriptor.enumerable !== true || !("value" in descriptor)) continue;
      defineProperty(copy, key, {
        value: importValue(descriptor.value, memo),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return copy;
  };

  // ---- copying the result out (guest realm → transferable plain data) ---
  let untransferable: object | undefined;
  const refuse = (reason: string): never => {
    untransferable = record({ reason });
    throw untransferable;
  };
  // What the copy will cost the host, in bytes (strings as UTF-16, 8 per value):
  // a string referenced many times is copied many times, so count every reference.
  const budget = record({ used: 0, limit: Number.POSITIVE_INFINITY });
  const charge = (bytes: number): void => {
    budget.used += bytes;
    if (budget.used > budget.limit) refuse(`larger than the memory limit of ${budget.limit} bytes`);
  };
  const exportValue = (value: unknown, ancestors: Set<unknown>): unknown => {
    charge(typeof value === "string" ? 8 + value.length * 2 : 8);
    switch (typeof value) {
      case "function":
        return refuse("function");
      case "symbol":
        return refuse("symbol");
      case "bigint":
        return refuse("bigint");
      case "object":
        break;
      default:
        return value;
    }
    if (value === null) return null;
    const object = value as object;
    if (call(setHas, ancestors, object)) return refuse("cyclic");
    if (isDate(object)) return new DateCtor(call(dateGetTime, object) as number);
    if (isRegExp(object)) {
      return new RegExpCtor(call(regExpSource, object) as string, call(regExpFlags, object) as string);
    }
    const tag = tagOfTypedArray(object);
    if (tag !== undefined) {
      const Ctor = typedArrays[tag];
      if (Ctor === undefined) return refuse("DataView");
      charge(call(typedArrayByteLength, object) as number);
      return new Ctor(object);
    }
    if (isArrayBuffer(object)) {
      charge(call(arrayBufferByteLength, object) as number);
      return call(arrayBufferSlice, object, 0);
    }
    call(setAdd, ancestors, object);
    try {
      if (isArray(object)) {
        const copy: unknown[] = [];
        const length = object.length;
        for (let i = 0; i < length; i++) {
          defineProperty(copy, i, {
            value: exportValue((object as unknown[])[i], ancestors),
            writable: true,
            enumerable: true,
            configurable: true,
          });
        }
        return copy;
      }
      if (isMap(object)) {
        const copy = new MapCtor();
        call(mapForEach, object, (entry: unknown, key: unknown) => {
          call(mapSet, copy, exportValue(key, ancestors), exportValue(entry, ancestors));
        });
        return copy;
      }
      if (isSet(object)) {
        const copy = new SetCtor();
        call(setForEach, object, (entry: unknown) => {
          call(setAdd, copy, exportValue(entry, ancestors));
        });
        return copy;
      }
      if (isErrorLike(object)) {
        const message = `${(object as Error).message}`;
        const name = `${(object as Error).name}`;
        charge((message.length + name.length) * 2);
        const copy = new ErrorCtor(message);
        defineProperty(copy, "name", {
          value: name,
          writable: true,
          configurable: true,
        });
        defineProperty(copy, "stack", { value: "", writable: true, configurable: true });
        return copy;
      }
      const copy = record({} as Record<string, unknown>);
      const keys = ownKeys(object);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (typeof key !== "string") continue;
        const descriptor = getOwnPropertyDescriptor(object, key);
        if (descriptor === undefined || descriptor.enumerable !== true) continue;
        charge(key.length * 2);
        const entry = "value" in descriptor ? descriptor.value : call(descriptor.get, object);
        defineProperty(copy, key, {
          value: exportValue(entry, ancestors),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return copy;
    } finally {
      call(setDelete, ancestors, object);
    }
  };

  // ---- the completion value ---------------------------------------------
  let state: "pending" | "fulfilled" | "rejected" = "pending";
  let settledValue: unknown;
  const decide = (next: "fulfilled" | "rejected", value: unknown): void => {
    if (state !== "pending") return;
    state = next;
    settledValue = value;
    try {
      settled();
    } catch {
      // see addTimer
    }
  };

  const kernel: GuestKernel = {
    defineGlobal(name, value) {
      try {
        defineProperty(globalThis, name, {
          value: importValue(value, new MapCtor()),
          writable: true,
          enumerable: true,
          configurable: true,
        });
        return "";
      } catch (error) {
        return describe(error);
      }
    },
    defineModule(name, factory) {
      if (typeof factory !== "function") return "the module factory is not a function";
      const exports = {};
      const module = { exports };
      try {
        apply(factory as (m: unknown, e: unknown) => unknown, exports, [module, exports]);
        defineProperty(globalThis, name, {
          value: module.exports,
          writable: true,
          enumerable: true,
          configurable: true,
        });
        return "";
      } catch (error) {
        return describe(error);
      }
    },
    track(value) {
      try {
        const promise = call(promiseResolve, PromiseCtor, value);
        call(
          promiseThen,
          promise,
          (result: unknown) => decide("fulfilled", result),
          (error: unknown) => decide("rejected", error),
        );
      } catch (error) {
        decide("rejected", error);
      }
    },
    outcome(maxResultBytes): KernelOutcome {
      if (state === "pending") return record({ ok: false, pending: true });
      if (state === "rejected")
        return record({ ok: false, untransferable: false, error: describe(settledValue) });
      budget.used = 0;
      budget.limit = typeof maxResultBytes === "number" ? maxResultBytes : Number.POSITIVE_INFINITY;
      try {
        return record({ ok: true, value: exportValue(settledValue, new SetCtor()) });
      } catch (error) {
        if (error !== undefined && error === untransferable) {
          return record({
            ok: false,
            untransferable: true,
            error: `result is not transferable: ${(untransferable as { reason: string }).reason}`,
          });
        }
        return record({
          ok: false,
          untransferable: true,
          error: `result could not be copied: ${describe(error)}`,
        });
      }
    },
    describe,
    fire(id) {
      const timer = call(mapGet, timers, id) as GuestTimer | undefined;
      if (timer === undefined) return "";
      if (!timer.repeat) call(mapDelete, timers, id);
      try {
        apply(timer.fn, undefined, timer.args);
        return "";
      } catch (error) {
        return describe(error);
      }
    },
    cancelAll() {
      outputOpen = false;
      const ids: number[] = [];
      call(mapForEach, timers, (_timer: unknown, id: number) => {
        defineProperty(ids, ids.length, { value: id, writable: true, enumerable: true, configurable: true });
      });
      for (let i = 0; i < ids.length; i++) call(mapDelete, timers, ids[i]);
    },
  };
  return record(kernel);
}
