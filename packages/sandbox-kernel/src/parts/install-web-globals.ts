import type { KernelKit } from "../kit.js";

/**
 * GUEST REALM. The web-standard globals of `GUEST_GLOBALS` (sandbox-core)
 * other than URL: implemented here, in the guest realm, with no host object
 * behind them, so every engine behaves the same.
 *
 * - `DOMException`, `Event`, `EventTarget`, `AbortController`, `AbortSignal`
 *   (`AbortSignal.timeout` is an ordinary guest timer: it counts against the
 *   timer limits and a run waits for it as for any pending timer).
 * - `TextEncoder`, `TextDecoder` (UTF-8 only), `atob`, `btoa`.
 * - `structuredClone` (no `transfer`: the realm cannot detach an ArrayBuffer
 *   on every Node line, so a non-empty transfer list is a DataCloneError).
 * - `crypto.getRandomValues` and `crypto.randomUUID` from a ChaCha20
 *   keystream keyed by `config.entropy` (fresh host randomness per realm; the
 *   key leaves the kit at install). No `crypto.subtle`.
 * - `performance.now()` and `performance.timeOrigin` from the realm's
 *   `Date.now()`: millisecond resolution, never going backwards.
 *
 * Install only captures intrinsics and defines classes; no instance is made
 * and no keystream block is computed until guest code asks.
 */
export function installWebGlobals(kit: KernelKit): void {
  const { apply, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, ownKeys } = Reflect;
  const ObjectCtor = Object;
  const ObjectPrototype = Object.prototype;
  const objectCreate = Object.create;
  const objectToString = Object.prototype.toString;
  const setPrototypeOf = Object.setPrototypeOf;
  const toStringTag = Symbol.toStringTag;
  const toLower = String.prototype.toLowerCase;
  const trim = String.prototype.trim;
  const isArray = Array.isArray;
  const ArrayCtor = Array;
  const StringCtor = String;
  const numberIsInteger = Number.isInteger;
  const UNLIMITED = 1 / 0;
  const fromCharCode = String.fromCharCode;
  const charCodeAt = String.prototype.charCodeAt;
  const stringSlice = String.prototype.slice;
  const parseIntFn = Number.parseInt;
  const functionToString = Function.prototype.toString;
  const dateNow = Date.now;
  const ErrorCtor = Error;
  const captureStackTrace = (ErrorCtor as { captureStackTrace?: (target: object, fn?: unknown) => void })
    .captureStackTrace;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const MapCtor = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapForEach = Map.prototype.forEach;
  const mapSize = getOwnPropertyDescriptor(Map.prototype, "size")?.get as () => number;
  const SetCtor = Set;
  const setAdd = Set.prototype.add;
  const setForEach = Set.prototype.forEach;
  const setSize = getOwnPropertyDescriptor(Set.prototype, "size")?.get as () => number;
  const DateCtor = Date;
  const dateGetTime = Date.prototype.getTime;
  const RegExpCtor = RegExp;
  const RegExpPrototype = RegExp.prototype;
  const regExpGetter = (name: string) => getOwnPropertyDescriptor(RegExpPrototype, name)?.get;
  const regExpSource = regExpGetter("source") as () => string;
  // The flags one by one: the `flags` getter reads properties a guest may redefine.
  const regExpFlags: readonly (readonly [string, (() => boolean) | undefined])[] = [
    ["d", regExpGetter("hasIndices")],
    ["g", regExpGetter("global")],
    ["i", regExpGetter("ignoreCase")],
    ["m", regExpGetter("multiline")],
    ["s", regExpGetter("dotAll")],
    ["u", regExpGetter("unicode")],
    ["v", regExpGetter("unicodeSets")],
    ["y", regExpGetter("sticky")],
  ];
  const ArrayBufferCtor = ArrayBuffer;
  const arrayBufferByteLength = getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength")
    ?.get as () => number;
  const Uint8ArrayCtor = Uint8Array;
  const Uint32ArrayCtor = Uint32Array;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object;
  const typedArrayGetter = (name: string | symbol) =>
    getOwnPropertyDescriptor(TypedArrayPrototype, name)?.get;
  const typedArrayTag = typedArrayGetter(Symbol.toStringTag) as () => string | undefined;
  const typedArrayBuffer = typedArrayGetter("buffer") as () => ArrayBuffer;
  const typedArrayByteOffset = typedArrayGetter("byteOffset") as () => number;
  const typedArrayByteLength = typedArrayGetter("byteLength") as () => number;
  const typedArrayLength = typedArrayGetter("length") as () => number;
  const typedArraySet = (TypedArrayPrototype as { set: (a: ArrayLike<number>, o?: number) => void }).set;
  const DataViewCtor = DataView;
  const dataViewGetter = (name: string) => getOwnPropertyDescriptor(DataView.prototype, name)?.get;
  const dataViewBuffer = dataViewGetter("buffer") as () => ArrayBuffer;
  const dataViewByteOffset = dataViewGetter("byteOffset") as () => number;
  const dataViewByteLength = dataViewGetter("byteLength") as () => number;
  const G = globalThis as unknown as Record<string, unknown>;
  const typedArrayCtors = new MapCtor<
    string,
    new (
      buffer: ArrayBuffer,
      offset: number,
      length: number,
    ) => object
  >();
  {
    const names = [
      "Int8Array",
      "Uint8Array",
      "Uint8ClampedArray",
      "Int16Array",
      "Uint16Array",
      "Int32Array",
      "Uint32Array",
      "Float16Array",
      "Float32Array",
      "Float64Array",
      "BigInt64Array",
      "BigUint64Array",
    ];
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      if (typeof G[name] === "function") apply(mapSet, typedArrayCtors, [name, G[name]]);
    }
  }
  const valueOfs: readonly unknown[] = [
    Boolean.prototype.valueOf,
    Number.prototype.valueOf,
    String.prototype.valueOf,
    BigInt.prototype.valueOf,
  ];
  const symbolValueOf = Symbol.prototype.valueOf;
  const weakMapHas = WeakMap.prototype.has;
  const weakSetHas = WeakSet.prototype.has;
  const weakRefDeref = typeof WeakRef === "function" ? WeakRef.prototype.deref : undefined;
  const errorCtors = new MapCtor<string, ErrorConstructor>([
    ["Error", Error],
    ["EvalError", EvalError],
    ["RangeError", RangeError],
    ["ReferenceError", ReferenceError],
    ["SyntaxError", SyntaxError],
    ["TypeError", TypeError],
    ["URIError", URIError],
  ]);
  // Captured now: a guest may replace the global before it calls AbortSignal.timeout.
  const setTimeoutFn = G.setTimeout as (fn: () => void, ms: number) => unknown;

  /** True when `getter` accepts `value` as its receiver (a brand check with no side effect). */
  const brand = (getter: unknown, value: unknown): boolean => {
    try {
      apply(getter as () => unknown, value, []);
      return true;
    } catch {
      return false;
    }
  };
  /** A null-prototype descriptor for a writable, configurable property. */
  const dataDescriptor = (value: unknown, enumerable: boolean): PropertyDescriptor => {
    const descriptor = objectCreate(null) as PropertyDescriptor;
    descriptor.value = value;
    descriptor.writable = true;
    descriptor.enumerable = enumerable;
    descriptor.configurable = true;
    return descriptor;
  };
  /**
   * Give a function its web name: a bundler may rename a declaration that shadows a global
   * (esbuild makes `class TextEncoder` `TextEncoder2` in the worker entry), and `.name` follows.
   */
  const named = (fn: object, name: string): void => {
    const descriptor = objectCreate(null) as PropertyDescriptor;
    descriptor.value = name;
    descriptor.configurable = true;
    defineProperty(fn, "name", descriptor);
  };
  /** A class's name, and its prototype's Symbol.toStringTag as on the web. */
  const setTag = (Class: { prototype: object }, tag: string): void => {
    named(Class, tag);
    const descriptor = objectCreate(null) as PropertyDescriptor;
    descriptor.value = tag;
    descriptor.configurable = true;
    defineProperty(Class.prototype, toStringTag, descriptor);
  };
  /** Node's "must be specified" error for a missing argument. */
  const missing = (name: string): TypeError => {
    const error = new TypeErrorCtor(`The "${name}" argument must be specified`);
    defineProperty(error, "code", dataDescriptor("ERR_MISSING_ARGS", false));
    return error;
  };

  // ---- performance (shared by Event.timeStamp) ---------------------------
  let timeOrigin = apply(dateNow, DateCtor, []) as number;
  let lastNow = 0;
  const now = (): number => {
    const elapsed = (apply(dateNow, DateCtor, []) as number) - timeOrigin;
    // The realm's clock may be set back; performance.now() never is.
    if (elapsed > lastNow) lastNow = elapsed;
    return lastNow;
  };

  const config = kit.config as { entropy?: unknown };
  let entropy = typeof config.entropy === "string" ? config.entropy : "";
  // The key stays in this closure only: nothing else in the realm can read it.
  delete config.entropy;

  // Everything below is made on the first read of one of these globals, not at install (which
  // runs for every execution): it uses only what was captured above, so a guest that tampered
  // with built-ins before that read changes nothing in it.
  const build = (): Record<string, unknown> => {
    // ---- DOMException ------------------------------------------------------
    const legacyCode = (name: string): number => {
      switch (name) {
        case "IndexSizeError":
          return 1;
        case "HierarchyRequestError":
          return 3;
        case "WrongDocumentError":
          return 4;
        case "InvalidCharacterError":
          return 5;
        case "NoModificationAllowedError":
          return 7;
        case "NotFoundError":
          return 8;
        case "NotSupportedError":
          return 9;
        case "InvalidStateError":
          return 11;
        case "SyntaxError":
          return 12;
        case "InvalidModificationError":
          return 13;
        case "NamespaceError":
          return 14;
        case "InvalidAccessError":
          return 15;
        case "TypeMismatchError":
          return 17;
        case "SecurityError":
          return 18;
        case "NetworkError":
          return 19;
        case "AbortError":
          return 20;
        case "URLMismatchError":
          return 21;
        case "QuotaExceededError":
          return 22;
        case "TimeoutError":
          return 23;
        case "InvalidNodeTypeError":
          return 24;
        case "DataCloneError":
          return 25;
        default:
          return 0;
      }
    };
    let isDOMException: (value: unknown) => boolean = () => false;
    class DOMException extends ErrorCtor {
      #name: string;
      #message: string;
      constructor(message: unknown = "", options: unknown = "Error") {
        // No message to super: as in Node, `stack` is the only own property.
        super();
        this.#message = StringCtor(message);
        if (options !== null && typeof options === "object") {
          const name = (options as { name?: unknown }).name;
          this.#name = name === undefined ? "Error" : StringCtor(name);
          if ("cause" in options)
            defineProperty(this, "cause", dataDescriptor((options as { cause?: unknown }).cause, false));
        } else {
          this.#name = StringCtor(options);
        }
        // Where the stack was formatted by `super()` (QuickJS), it read no name or message yet.
        if (kit.stacksAtConstruction && captureStackTrace !== undefined)
          apply(captureStackTrace, ErrorCtor, [this, DOMException]);
      }
      override get name(): string {
        return this.#name;
      }
      override get message(): string {
        return this.#message;
      }
      get code(): number {
        return legacyCode(this.#name);
      }
      static {
        isDOMException = (value) => value !== null && typeof value === "object" && #name in value;
      }
    }
    named(DOMException, "DOMException");
    // No Symbol.toStringTag (Node has "DOMException"): the kernel tells errors by their
    // "[object Error]" tag, and a thrown DOMException must be described as an error.
    const domError = (message: string, name: string): DOMException => new DOMException(message, name);

    // ---- Event and EventTarget ---------------------------------------------
    interface EventState {
      type: string;
      bubbles: boolean;
      cancelable: boolean;
      composed: boolean;
      defaultPrevented: boolean;
      stopped: boolean;
      dispatching: boolean;
      target: unknown;
      currentTarget: unknown;
      timeStamp: number;
    }
    let eventState: (value: unknown) => EventState | undefined = () => undefined;
    class Event {
      #state: EventState;
      constructor(type: unknown, ...rest: unknown[]) {
        if (arguments.length === 0) throw missing("type");
        const init = rest.length === 0 ? undefined : rest[0];
        const options = (init ?? objectCreate(null)) as {
          bubbles?: unknown;
          cancelable?: unknown;
          composed?: unknown;
        };
        if (typeof options !== "object" && typeof options !== "function") {
          throw new TypeErrorCtor('The "options" argument must be of type object.');
        }
        const state = objectCreate(null) as EventState;
        state.type = StringCtor(type);
        state.bubbles = !!options.bubbles;
        state.cancelable = !!options.cancelable;
        state.composed = !!options.composed;
        state.defaultPrevented = false;
        state.stopped = false;
        state.dispatching = false;
        state.target = null;
        state.currentTarget = null;
        state.timeStamp = now();
        this.#state = state;
      }
      get type(): string {
        return this.#state.type;
      }
      get target(): unknown {
        return this.#state.target;
      }
      get currentTarget(): unknown {
        return this.#state.currentTarget;
      }
      get srcElement(): unknown {
        return this.#state.target;
      }
      get bubbles(): boolean {
        return this.#state.bubbles;
      }
      get cancelable(): boolean {
        return this.#state.cancelable;
      }
      get composed(): boolean {
        return this.#state.composed;
      }
      get defaultPrevented(): boolean {
        return this.#state.cancelable && this.#state.defaultPrevented;
      }
      get returnValue(): boolean {
        return !(this.#state.cancelable && this.#state.defaultPrevented);
      }
      get eventPhase(): number {
        return this.#state.dispatching ? 2 : 0;
      }
      get isTrusted(): boolean {
        return false;
      }
      get timeStamp(): number {
        return this.#state.timeStamp;
      }
      get cancelBubble(): boolean {
        return this.#state.stopped;
      }
      composedPath(): unknown[] {
        return this.#state.dispatching ? [this.#state.currentTarget] : [];
      }
      preventDefault(): void {
        this.#state.defaultPrevented = true;
      }
      stopPropagation(): void {
        // One target, no propagation path: nothing to stop beyond it.
      }
      stopImmediatePropagation(): void {
        this.#state.stopped = true;
      }
      static {
        eventState = (value) =>
          value !== null && typeof value === "object" && #state in value ? value.#state : undefined;
      }
    }
    setTag(Event, "Event");

    interface Listener {
      callback: unknown;
      capture: boolean;
      once: boolean;
      removed: boolean;
    }
    let listenersOf: (target: unknown) => Map<string, Listener[]> | undefined = () => undefined;
    // Null-prototype arrays: an index setter a guest put on Array.prototype never runs here.
    const list = <T>(): T[] => setPrototypeOf([], null) as T[];
    const without = (listeners: Listener[], gone: Listener): Listener[] => {
      const kept = list<Listener>();
      for (let i = 0; i < listeners.length; i++) {
        const listener = listeners[i] as Listener;
        if (listener !== gone) kept[kept.length] = listener;
      }
      return kept;
    };
    class EventTarget {
      #listeners: Map<string, Listener[]> | undefined;
      addEventListener(type: unknown, callback: unknown, options?: unknown): void {
        if (arguments.length < 2) throw missing(arguments.length === 0 ? "type" : "listener");
        if (callback === null || callback === undefined) return;
        let capture = false;
        let once = false;
        let signal: unknown;
        if (typeof options === "boolean") capture = options;
        else if (options !== null && typeof options === "object") {
          const read = options as { capture?: unknown; once?: unknown; signal?: unknown };
          capture = !!read.capture;
          once = !!read.once;
          signal = read.signal;
          if (signal !== undefined && !isSignal(signal)) {
            throw new TypeErrorCtor('The "options.signal" property must be an instance of AbortSignal.');
          }
        }
        if (signal !== undefined && signalAborted(signal)) return;
        const key = StringCtor(type);
        if (this.#listeners === undefined) this.#listeners = new MapCtor();
        let listeners = apply(mapGet, this.#listeners, [key]) as Listener[] | undefined;
        if (listeners === undefined) {
          listeners = list<Listener>();
          apply(mapSet, this.#listeners, [key, listeners]);
        }
        for (let i = 0; i < listeners.length; i++) {
          const listener = listeners[i] as Listener;
          if (listener.callback === callback && listener.capture === capture) return;
        }
        const listener = objectCreate(null) as Listener;
        listener.callback = callback;
        listener.capture = capture;
        listener.once = once;
        listener.removed = false;
        listeners[listeners.length] = listener;
        if (signal !== undefined) {
          onSignalAbort(signal, () => {
            apply(removeListener, this, [key, listener]);
          });
        }
      }
      removeEventListener(type: unknown, callback: unknown, options?: unknown): void {
        if (arguments.length < 2) throw missing(arguments.length === 0 ? "type" : "listener");
        if (this.#listeners === undefined) return;
        const capture =
          typeof options === "boolean"
            ? options
            : options !== null && typeof options === "object" && !!(options as { capture?: unknown }).capture;
        const listeners = apply(mapGet, this.#listeners, [StringCtor(type)]) as Listener[] | undefined;
        if (listeners === undefined) return;
        for (let i = 0; i < listeners.length; i++) {
          const listener = listeners[i] as Listener;
          if (listener.callback === callback && listener.capture === capture) {
            apply(removeListener, this, [StringCtor(type), listener]);
            return;
          }
        }
      }
      dispatchEvent(event: unknown): boolean {
        const state = eventState(event);
        if (state === undefined)
          throw new TypeErrorCtor('The "event" argument must be an instance of Event.');
        if (state.dispatching)
          throw domError(`The event "${state.type}" is already being dispatched`, "InvalidStateError");
        state.dispatching = true;
        state.target = this;
        state.currentTarget = this;
        const listeners =
          this.#listeners === undefined
            ? undefined
            : (apply(mapGet, this.#listeners, [state.type]) as Listener[] | undefined);
        try {
          // The list as it was: listeners added during dispatch wait for the next event.
          const snapshot =
            listeners === undefined ? list<Listener>() : without(listeners, undefined as never);
          for (let i = 0; i < snapshot.length && !state.stopped; i++) {
            const listener = snapshot[i] as Listener;
            if (listener.removed) continue;
            if (listener.once) apply(removeListener, this, [state.type, listener]);
            try {
              const callback = listener.callback;
              if (typeof callback === "function") apply(callback, this, [event]);
              else {
                const handle = (callback as { handleEvent?: unknown }).handleEvent;
                if (typeof handle === "function") apply(handle, callback, [event]);
              }
            } catch (error) {
              // As in Node: a listener's error is uncaught (it fails the run), not thrown from dispatchEvent.
              kit.reportError(error);
            }
          }
        } finally {
          state.dispatching = false;
          state.currentTarget = null;
        }
        return !(state.cancelable && state.defaultPrevented);
      }
      static {
        listenersOf = (target) => (target as EventTarget).#listeners;
      }
    }
    setTag(EventTarget, "EventTarget");
    const removeListener = function (this: EventTarget, type: string, gone: Listener): void {
      const map = listenersOf(this);
      if (map === undefined) return;
      const listeners = apply(mapGet, map, [type]) as Listener[] | undefined;
      if (listeners === undefined) return;
      gone.removed = true;
      apply(mapSet, map, [type, without(listeners, gone)]);
    };
    const addListener = EventTarget.prototype.addEventListener;
    const dispatch = EventTarget.prototype.dispatchEvent;

    // ---- AbortController and AbortSignal -----------------------------------
    let constructing = false;
    const illegal = (): TypeError => {
      const error = new TypeErrorCtor("Illegal constructor");
      defineProperty(error, "code", dataDescriptor("ERR_ILLEGAL_CONSTRUCTOR", false));
      return error;
    };
    interface SignalState {
      aborted: boolean;
      reason: unknown;
      onabort: unknown;
      handlerAdded: boolean;
    }
    let signalState: (value: unknown) => SignalState | undefined = () => undefined;
    const isSignal = (value: unknown): boolean => signalState(value) !== undefined;
    const signalAborted = (signal: unknown): boolean => (signalState(signal) as SignalState).aborted;
    const onSignalAbort = (signal: unknown, fn: () => void): void => {
      apply(addListener, signal, ["abort", fn, { __proto__: null, once: true }]);
    };
    const abortSignal = (signal: AbortSignal, reason: unknown): void => {
      const state = signalState(signal) as SignalState;
      if (state.aborted) return;
      state.aborted = true;
      state.reason = reason === undefined ? domError("This operation was aborted", "AbortError") : reason;
      apply(dispatch, signal, [new Event("abort")]);
    };
    const newSignal = (): AbortSignal => {
      constructing = true;
      try {
        return new AbortSignal();
      } finally {
        constructing = false;
      }
    };
    class AbortSignal extends EventTarget {
      #state: SignalState;
      constructor() {
        if (!constructing) throw illegal();
        super();
        const state = objectCreate(null) as SignalState;
        state.aborted = false;
        state.reason = undefined;
        state.onabort = null;
        state.handlerAdded = false;
        this.#state = state;
      }
      get aborted(): boolean {
        return this.#state.aborted;
      }
      get reason(): unknown {
        return this.#state.reason;
      }
      get onabort(): unknown {
        return this.#state.onabort;
      }
      set onabort(handler: unknown) {
        const state = this.#state;
        state.onabort =
          typeof handler === "function" || (handler !== null && typeof handler === "object") ? handler : null;
        if (state.onabort !== null && !state.handlerAdded) {
          // An event handler attribute: one listener, in the place where the first handler was set.
          state.handlerAdded = true;
          apply(addListener, this, [
            "abort",
            (event: unknown) => {
              const current = state.onabort;
              if (typeof current === "function") apply(current, this, [event]);
            },
          ]);
        }
      }
      throwIfAborted(): void {
        if (this.#state.aborted) throw this.#state.reason;
      }
      static abort(...rest: unknown[]): AbortSignal {
        const reason = rest.length === 0 ? undefined : rest[0];
        const signal = newSignal();
        const state = signal.#state;
        state.aborted = true;
        state.reason = reason === undefined ? domError("This operation was aborted", "AbortError") : reason;
        return signal;
      }
      static timeout(delay: unknown): AbortSignal {
        if (typeof delay !== "number") {
          throw new TypeErrorCtor(
            `The "delay" argument must be of type number. Received ${kit.inspect(delay)}`,
          );
        }
        if (!numberIsInteger(delay) || delay < 0 || delay > 4_294_967_295) {
          throw new RangeErrorCtor(
            `The value of "delay" is out of range. It must be >= 0 && <= 4294967295. Received ${kit.inspect(delay)}`,
          );
        }
        const signal = newSignal();
        // Past the longest timer no run lasts that long: such a signal never aborts.
        if (delay <= 2_147_483_647) {
          apply(setTimeoutFn, undefined, [
            () => abortSignal(signal, domError("The operation was aborted due to timeout", "TimeoutError")),
            delay,
          ]);
        }
        return signal;
      }
      static any(signals: unknown): AbortSignal {
        if (!isArray(signals))
          throw new TypeErrorCtor('The "signals" argument must be an instance of Array.');
        const sources = list<AbortSignal>();
        for (let i = 0; i < (signals as unknown[]).length; i++) {
          const source = (signals as unknown[])[i];
          if (!isSignal(source))
            throw new TypeErrorCtor(`The "signals[${i}]" argument must be an instance of AbortSignal.`);
          sources[sources.length] = source as AbortSignal;
        }
        const result = newSignal();
        for (let i = 0; i < sources.length; i++) {
          const state = (sources[i] as AbortSignal).#state;
          if (state.aborted) {
            result.#state.aborted = true;
            result.#state.reason = state.reason;
            return result;
          }
        }
        for (let i = 0; i < sources.length; i++) {
          const source = sources[i] as AbortSignal;
          onSignalAbort(source, () => abortSignal(result, source.#state.reason));
        }
        return result;
      }
      static {
        signalState = (value) =>
          value !== null && typeof value === "object" && #state in value ? value.#state : undefined;
      }
    }
    setTag(AbortSignal, "AbortSignal");
    class AbortController {
      #signal: AbortSignal = newSignal();
      get signal(): AbortSignal {
        return this.#signal;
      }
      abort(reason?: unknown): void {
        abortSignal(this.#signal, reason);
      }
    }
    setTag(AbortController, "AbortController");

    // ---- bytes of a BufferSource -------------------------------------------
    /** A Uint8Array over the bytes of an ArrayBuffer or view, read with captured getters; undefined otherwise. */
    const bytesOf = (value: unknown): Uint8Array | undefined => {
      if (value === null || typeof value !== "object") return undefined;
      if (apply(typedArrayTag, value, []) !== undefined) {
        return new Uint8ArrayCtor(
          apply(typedArrayBuffer, value, []) as ArrayBuffer,
          apply(typedArrayByteOffset, value, []) as number,
          apply(typedArrayByteLength, value, []) as number,
        );
      }
      if (brand(dataViewByteLength, value)) {
        return new Uint8ArrayCtor(
          apply(dataViewBuffer, value, []) as ArrayBuffer,
          apply(dataViewByteOffset, value, []) as number,
          apply(dataViewByteLength, value, []) as number,
        );
      }
      if (brand(arrayBufferByteLength, value)) return new Uint8ArrayCtor(value as ArrayBuffer);
      return undefined;
    };
    /** Code units to a string, in chunks `String.fromCharCode` takes as arguments. */
    const unitsToString = (units: number[]): string => {
      let text = "";
      const chunk = list<number>();
      for (let i = 0; i < units.length; i++) {
        chunk[chunk.length] = units[i] as number;
        if (chunk.length === 8192) {
          text += apply(fromCharCode, StringCtor, chunk) as string;
          chunk.length = 0;
        }
      }
      return chunk.length === 0 ? text : text + (apply(fromCharCode, StringCtor, chunk) as string);
    };

    // ---- TextEncoder and TextDecoder ---------------------------------------
    /** UTF-8 bytes of `text` into `out` from 0 (or just their count when `out` is undefined); lone surrogates as U+FFFD. */
    const utf8 = (
      text: string,
      out: Uint8Array | undefined,
      limit: number,
      counts?: { read: number },
    ): number => {
      let n = 0;
      let i = 0;
      for (; i < text.length; i++) {
        let c = apply(charCodeAt, text, [i]) as number;
        let size = c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
        let pair = false;
        if (c >= 0xd800 && c <= 0xdfff) {
          const next = i + 1 < text.length ? (apply(charCodeAt, text, [i + 1]) as number) : 0;
          if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
            c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
            size = 4;
            pair = true;
          } else c = 0xfffd;
        }
        if (n + size > limit) break;
        if (out !== undefined) {
          if (size === 1) out[n] = c;
          else if (size === 2) {
            out[n] = 0xc0 | (c >> 6);
            out[n + 1] = 0x80 | (c & 0x3f);
          } else if (size === 3) {
            out[n] = 0xe0 | (c >> 12);
            out[n + 1] = 0x80 | ((c >> 6) & 0x3f);
            out[n + 2] = 0x80 | (c & 0x3f);
          } else {
            out[n] = 0xf0 | (c >> 18);
            out[n + 1] = 0x80 | ((c >> 12) & 0x3f);
            out[n + 2] = 0x80 | ((c >> 6) & 0x3f);
            out[n + 3] = 0x80 | (c & 0x3f);
          }
        }
        n += size;
        if (pair) i++;
      }
      if (counts !== undefined) counts.read = i;
      return n;
    };
    class TextEncoder {
      get encoding(): string {
        return "utf-8";
      }
      encode(input: unknown = ""): Uint8Array {
        const text = StringCtor(input);
        const out = new Uint8ArrayCtor(utf8(text, undefined, UNLIMITED));
        utf8(text, out, UNLIMITED);
        return out;
      }
      encodeInto(source: unknown, destination: unknown): { read: number; written: number } {
        if (arguments.length < 2) throw missing(arguments.length === 0 ? "src" : "dest");
        if (apply(typedArrayTag, destination, []) !== "Uint8Array") {
          throw new TypeErrorCtor('The "dest" argument must be an instance of Uint8Array.');
        }
        const counts = objectCreate(null) as { read: number };
        const written = utf8(
          StringCtor(source),
          destination as Uint8Array,
          apply(typedArrayLength, destination, []) as number,
          counts,
        );
        return { read: counts.read, written };
      }
    }
    setTag(TextEncoder, "TextEncoder");

    const isUtf8Label = (label: string): boolean =>
      label === "utf-8" ||
      label === "utf8" ||
      label === "unicode-1-1-utf-8" ||
      label === "unicode11utf8" ||
      label === "unicode20utf8" ||
      label === "x-unicode20utf8";
    class TextDecoder {
      #fatal: boolean;
      #ignoreBOM: boolean;
      #streaming = false;
      #bomDone = false;
      #need = 0;
      #seen = 0;
      #cp = 0;
      #lower = 0x80;
      #upper = 0xbf;
      constructor(label: unknown = "utf-8", options?: unknown) {
        const encoding = apply(toLower, apply(trim, StringCtor(label), []), []) as string;
        if (!isUtf8Label(encoding)) {
          const error = new RangeErrorCtor(`The "${encoding}" encoding is not supported`);
          defineProperty(error, "code", dataDescriptor("ERR_ENCODING_NOT_SUPPORTED", false));
          throw error;
        }
        const read = (options ?? objectCreate(null)) as { fatal?: unknown; ignoreBOM?: unknown };
        if (typeof read !== "object" && typeof read !== "function") {
          throw new TypeErrorCtor('The "options" argument must be of type object.');
        }
        this.#fatal = !!read.fatal;
        this.#ignoreBOM = !!read.ignoreBOM;
      }
      get encoding(): string {
        return "utf-8";
      }
      get fatal(): boolean {
        return this.#fatal;
      }
      get ignoreBOM(): boolean {
        return this.#ignoreBOM;
      }
      decode(input?: unknown, options?: unknown): string {
        const bytes = input === undefined || input === null ? new Uint8ArrayCtor(0) : bytesOf(input);
        if (bytes === undefined) {
          throw new TypeErrorCtor(
            'The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.',
          );
        }
        const stream =
          options !== null && typeof options === "object" && !!(options as { stream?: unknown }).stream;
        if (!this.#streaming) {
          this.#bomDone = false;
          this.#need = 0;
          this.#seen = 0;
          this.#cp = 0;
          this.#lower = 0x80;
          this.#upper = 0xbf;
        }
        this.#streaming = stream;
        const units = list<number>();
        const fatal = this.#fatal;
        const fail = (): void => {
          if (fatal) {
            this.#streaming = false;
            const error = new TypeErrorCtor("The encoded data was not valid for encoding utf-8");
            defineProperty(error, "code", dataDescriptor("ERR_ENCODING_INVALID_ENCODED_DATA", false));
            throw error;
          }
          units[units.length] = 0xfffd;
        };
        const emit = (cp: number): void => {
          if (!this.#bomDone) {
            this.#bomDone = true;
            if (cp === 0xfeff && !this.#ignoreBOM) return;
          }
          if (cp > 0xffff) {
            units[units.length] = 0xd800 + ((cp - 0x10000) >> 10);
            units[units.length] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
          } else units[units.length] = cp;
        };
        for (let i = 0; i < bytes.length; i++) {
          const byte = bytes[i] as number;
          if (this.#need === 0) {
            if (byte <= 0x7f) emit(byte);
            else if (byte >= 0xc2 && byte <= 0xdf) {
              this.#need = 1;
              this.#cp = byte & 0x1f;
            } else if (byte >= 0xe0 && byte <= 0xef) {
              if (byte === 0xe0) this.#lower = 0xa0;
              if (byte === 0xed) this.#upper = 0x9f;
              this.#need = 2;
              this.#cp = byte & 0xf;
            } else if (byte >= 0xf0 && byte <= 0xf4) {
              if (byte === 0xf0) this.#lower = 0x90;
              if (byte === 0xf4) this.#upper = 0x8f;
              this.#need = 3;
              this.#cp = byte & 0x7;
            } else fail();
            continue;
          }
          if (byte < this.#lower || byte > this.#upper) {
            this.#need = 0;
            this.#seen = 0;
            this.#cp = 0;
            this.#lower = 0x80;
            this.#upper = 0xbf;
            fail();
            i--; // the byte starts the next sequence
            continue;
          }
          this.#lower = 0x80;
          this.#upper = 0xbf;
          this.#cp = (this.#cp << 6) | (byte & 0x3f);
          this.#seen++;
          if (this.#seen === this.#need) {
            const cp = this.#cp;
            this.#need = 0;
            this.#seen = 0;
            this.#cp = 0;
            emit(cp);
          }
        }
        if (!stream && this.#need !== 0) {
          this.#need = 0;
          this.#seen = 0;
          this.#cp = 0;
          this.#lower = 0x80;
          this.#upper = 0xbf;
          fail();
        }
        return unitsToString(units);
      }
    }
    setTag(TextDecoder, "TextDecoder");

    // ---- atob and btoa -----------------------------------------------------
    const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const sextet = (c: number): number =>
      c >= 65 && c <= 90
        ? c - 65
        : c >= 97 && c <= 122
          ? c - 71
          : c >= 48 && c <= 57
            ? c + 4
            : c === 43
              ? 62
              : c === 47
                ? 63
                : -1;
    function btoa(data: unknown): string {
      if (arguments.length === 0) throw missing("input");
      const text = StringCtor(data);
      let out = "";
      for (let i = 0; i < text.length; i += 3) {
        const a = apply(charCodeAt, text, [i]) as number;
        const b = i + 1 < text.length ? (apply(charCodeAt, text, [i + 1]) as number) : 0;
        const c = i + 2 < text.length ? (apply(charCodeAt, text, [i + 2]) as number) : 0;
        if (a > 255 || b > 255 || c > 255) throw domError("Invalid character", "InvalidCharacterError");
        const bits = (a << 16) | (b << 8) | c;
        out += ALPHABET[bits >> 18] as string;
        out += ALPHABET[(bits >> 12) & 63] as string;
        out += i + 1 < text.length ? (ALPHABET[(bits >> 6) & 63] as string) : "=";
        out += i + 2 < text.length ? (ALPHABET[bits & 63] as string) : "=";
      }
      return out;
    }
    function atob(data: unknown): string {
      if (arguments.length === 0) throw missing("input");
      const text = `${data}`;
      // Forgiving-base64 (HTML), with Node's choice of message for each failure.
      const values = list<number>();
      let counted = 0;
      let equals = 0;
      for (let i = 0; i < text.length; i++) {
        const c = apply(charCodeAt, text, [i]) as number;
        if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) continue;
        counted++;
        if (c === 0x3d) {
          equals++;
          if (equals > 2) throw domError("Invalid character", "InvalidCharacterError");
          continue;
        }
        const value = sextet(c);
        // Anything after "=" is not base64 either.
        if (value < 0 || equals > 0) throw domError("Invalid character", "InvalidCharacterError");
        values[values.length] = value;
      }
      let remainder = counted % 4;
      if (remainder === 0) remainder = (counted - equals) % 4;
      else if (equals > 0) throw domError("Invalid character", "InvalidCharacterError");
      if (remainder === 1) {
        throw domError("The string to be decoded is not correctly encoded.", "InvalidCharacterError");
      }
      const count = values.length;
      const units = list<number>();
      let buffer = 0;
      let bits = 0;
      for (let i = 0; i < count; i++) {
        buffer = (buffer << 6) | (values[i] as number);
        bits += 6;
        if (bits >= 8) {
          bits -= 8;
          units[units.length] = (buffer >> bits) & 0xff;
        }
      }
      return unitsToString(units);
    }

    // ---- structuredClone ---------------------------------------------------
    const cannotClone = (what: string): DOMException =>
      domError(`${what} could not be cloned.`, "DataCloneError");
    function structuredClone(value: unknown, options?: unknown): unknown {
      if (arguments.length === 0) throw missing("value");
      if (options !== undefined && options !== null) {
        if (typeof options !== "object")
          throw new TypeErrorCtor('The "options" argument must be of type object.');
        const transfer = (options as { transfer?: unknown }).transfer;
        if (transfer !== undefined && !(isArray(transfer) && (transfer as unknown[]).length === 0)) {
          throw domError(
            "structuredClone's transfer option is not supported in the sandbox: leave it out and the value is copied",
            "DataCloneError",
          );
        }
      }
      const memory = new MapCtor<unknown, unknown>();
      const property = (target: object, key: PropertyKey, item: unknown): void => {
        defineProperty(target, key, dataDescriptor(item, true));
      };
      const copyBuffer = (buffer: ArrayBuffer): ArrayBuffer => {
        const known = apply(mapGet, memory, [buffer]);
        if (known !== undefined) return known as ArrayBuffer;
        const copy = new ArrayBufferCtor(apply(arrayBufferByteLength, buffer, []) as number);
        apply(typedArraySet, new Uint8ArrayCtor(copy), [new Uint8ArrayCtor(buffer)]);
        apply(mapSet, memory, [buffer, copy]);
        return copy;
      };
      const clone = (input: unknown): unknown => {
        if (typeof input === "symbol") throw cannotClone(StringCtor(input));
        if (typeof input === "function") {
          let source: string;
          try {
            source = apply(functionToString, input, []) as string;
          } catch {
            source = "function";
          }
          throw cannotClone(source);
        }
        if (input === null || typeof input !== "object") return input;
        const known = apply(mapGet, memory, [input]);
        if (known !== undefined) return known;
        const remember = <T>(copy: T): T => {
          apply(mapSet, memory, [input, copy]);
          return copy;
        };
        if (isArray(input)) {
          const copy = remember(new ArrayCtor((input as unknown[]).length));
          copyOwn(input, copy);
          return copy;
        }
        if (brand(dateGetTime, input)) return remember(new DateCtor(apply(dateGetTime, input, []) as number));
        if (input !== RegExpPrototype && brand(regExpSource, input)) {
          let flags = "";
          for (let i = 0; i < regExpFlags.length; i++) {
            const entry = regExpFlags[i] as readonly [string, (() => boolean) | undefined];
            const getter = entry[1];
            const letter = entry[0];
            if (getter !== undefined && apply(getter, input, []) === true) flags += letter;
          }
          return remember(new RegExpCtor(apply(regExpSource, input, []) as string, flags));
        }
        if (brand(mapSize, input)) {
          const copy = remember(new MapCtor());
          // Entries first, then clones: a getter cannot add to the map while it is walked.
          const keys = list<unknown>();
          const values = list<unknown>();
          apply(mapForEach, input, [
            (item: unknown, key: unknown) => {
              keys[keys.length] = key;
              values[values.length] = item;
            },
          ]);
          for (let i = 0; i < keys.length; i++) apply(mapSet, copy, [clone(keys[i]), clone(values[i])]);
          return copy;
        }
        if (brand(setSize, input)) {
          const copy = remember(new SetCtor());
          const items = list<unknown>();
          apply(setForEach, input, [
            (item: unknown) => {
              items[items.length] = item;
            },
          ]);
          for (let i = 0; i < items.length; i++) apply(setAdd, copy, [clone(items[i])]);
          return copy;
        }
        if (brand(arrayBufferByteLength, input)) return copyBuffer(input as ArrayBuffer);
        const tag = apply(typedArrayTag, input, []) as string | undefined;
        if (tag !== undefined) {
          const Ctor = apply(mapGet, typedArrayCtors, [tag]) as new (
            b: ArrayBuffer,
            o: number,
            l: number,
          ) => object;
          const buffer = copyBuffer(apply(typedArrayBuffer, input, []) as ArrayBuffer);
          return remember(
            new Ctor(
              buffer,
              apply(typedArrayByteOffset, input, []) as number,
              apply(typedArrayLength, input, []) as number,
            ),
          );
        }
        if (brand(dataViewByteLength, input)) {
          const buffer = copyBuffer(apply(dataViewBuffer, input, []) as ArrayBuffer);
          return remember(
            new DataViewCtor(
              buffer,
              apply(dataViewByteOffset, input, []) as number,
              apply(dataViewByteLength, input, []) as number,
            ),
          );
        }
        for (let i = 0; i < valueOfs.length; i++) {
          const unbox = valueOfs[i] as unknown;
          if (brand(unbox, input)) {
            return remember(ObjectCtor(apply(unbox as () => unknown, input, [])));
          }
        }
        if (brand(symbolValueOf, input)) throw cannotClone("#<Symbol>");
        if (brand(weakMapHas, input)) throw cannotClone("#<WeakMap>");
        if (brand(weakSetHas, input)) throw cannotClone("#<WeakSet>");
        if (weakRefDeref !== undefined && brand(weakRefDeref, input)) throw cannotClone("#<WeakRef>");
        if (isDOMException(input)) {
          const source = input as DOMException;
          return remember(new DOMException(source.message, source.name));
        }
        const builtinTag = apply(objectToString, input, []) as string;
        if (builtinTag === "[object Promise]") throw cannotClone("#<Promise>");
        if (builtinTag === "[object Error]") return cloneError(input as Error, remember);
        const copy = remember(objectCreate(ObjectPrototype) as object);
        copyOwn(input as object, copy);
        return copy;
      };
      const copyOwn = (source: object, target: object): void => {
        const keys = ownKeys(source);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i] as PropertyKey;
          if (typeof key !== "string") continue;
          const descriptor = getOwnPropertyDescriptor(source, key);
          if (descriptor === undefined || !descriptor.enumerable) continue;
          property(target, key, clone((source as Record<string, unknown>)[key]));
        }
      };
      const cloneError = (source: Error, remember: <T>(copy: T) => T): Error => {
        // As HTML serializes an error: a known name or "Error"; an own message; stack and cause kept.
        const name = (source as { name?: unknown }).name;
        const Ctor = (typeof name === "string" ? apply(mapGet, errorCtors, [name]) : undefined) ?? ErrorCtor;
        const copy = remember(new (Ctor as ErrorConstructor)());
        const message = getOwnPropertyDescriptor(source, "message");
        if (message !== undefined && "value" in message) {
          defineProperty(copy, "message", dataDescriptor(StringCtor(message.value), false));
        }
        const stack = getOwnPropertyDescriptor(source, "stack");
        if (stack !== undefined && "value" in stack && typeof stack.value === "string") {
          defineProperty(copy, "stack", dataDescriptor(stack.value, false));
        }
        const cause = getOwnPropertyDescriptor(source, "cause");
        if (cause !== undefined && "value" in cause) {
          defineProperty(copy, "cause", dataDescriptor(clone(cause.value), false));
        }
        return copy;
      };
      return clone(value);
    }

    // ---- crypto: a ChaCha20 keystream keyed from host entropy --------------
    let state: Uint32Array | undefined;
    let working: Uint32Array | undefined;
    let block: Uint32Array | undefined;
    let blockBytes: Uint8Array | undefined;
    let position = 64;
    const rotl = (x: number, n: number): number => (x << n) | (x >>> (32 - n));
    const quarter = (w: Uint32Array, a: number, b: number, c: number, d: number): void => {
      w[a] = (w[a] as number) + (w[b] as number);
      w[d] = rotl((w[d] as number) ^ (w[a] as number), 16);
      w[c] = (w[c] as number) + (w[d] as number);
      w[b] = rotl((w[b] as number) ^ (w[c] as number), 12);
      w[a] = (w[a] as number) + (w[b] as number);
      w[d] = rotl((w[d] as number) ^ (w[a] as number), 8);
      w[c] = (w[c] as number) + (w[d] as number);
      w[b] = rotl((w[b] as number) ^ (w[c] as number), 7);
    };
    /** RFC 8439 ChaCha20: key from `entropy` (32 bytes as hex), nonce 0, block counter from 0. */
    const keystream = (): void => {
      if (state === undefined) {
        if (entropy.length !== 64) {
          throw new ErrorCtor(
            "crypto is not available: this realm was started without entropy from the host",
          );
        }
        state = new Uint32ArrayCtor(16);
        state[0] = 0x61707865;
        state[1] = 0x3320646e;
        state[2] = 0x79622d32;
        state[3] = 0x6b206574;
        for (let i = 0; i < 8; i++) {
          let word = 0;
          // Little-endian words, as RFC 8439 reads the key bytes.
          for (let j = 3; j >= 0; j--) {
            const byte = parseIntFn(
              apply(stringSlice, entropy, [i * 8 + j * 2, i * 8 + j * 2 + 2]) as string,
              16,
            );
            if (!(byte >= 0))
              throw new ErrorCtor("crypto is not available: the realm's entropy is malformed");
            word = (word << 8) | byte;
          }
          state[4 + i] = word;
        }
        entropy = "";
        working = new Uint32ArrayCtor(16);
        // Two views of one buffer made here: reading `.buffer` would run a getter a guest may replace.
        const bytes = new ArrayBufferCtor(64);
        block = new Uint32ArrayCtor(bytes);
        blockBytes = new Uint8ArrayCtor(bytes);
      }
      const s = state;
      const w = working as Uint32Array;
      const out = block as Uint32Array;
      for (let i = 0; i < 16; i++) w[i] = s[i] as number;
      for (let round = 0; round < 10; round++) {
        quarter(w, 0, 4, 8, 12);
        quarter(w, 1, 5, 9, 13);
        quarter(w, 2, 6, 10, 14);
        quarter(w, 3, 7, 11, 15);
        quarter(w, 0, 5, 10, 15);
        quarter(w, 1, 6, 11, 12);
        quarter(w, 2, 7, 8, 13);
        quarter(w, 3, 4, 9, 14);
      }
      for (let i = 0; i < 16; i++) out[i] = (w[i] as number) + (s[i] as number);
      s[12] = (s[12] as number) + 1;
      if (s[12] === 0) s[13] = (s[13] as number) + 1;
      position = 0;
    };
    const randomFill = (target: Uint8Array): void => {
      for (let i = 0; i < target.length; i++) {
        if (position === 64) keystream();
        target[i] = (blockBytes as Uint8Array)[position++] as number;
      }
    };
    const isIntegerArray = (tag: string | undefined): boolean =>
      tag === "Int8Array" ||
      tag === "Uint8Array" ||
      tag === "Uint8ClampedArray" ||
      tag === "Int16Array" ||
      tag === "Uint16Array" ||
      tag === "Int32Array" ||
      tag === "Uint32Array" ||
      tag === "BigInt64Array" ||
      tag === "BigUint64Array";
    const HEX = "0123456789abcdef";
    class Crypto {
      constructor() {
        if (!constructing) throw illegal();
      }
      getRandomValues<T>(array: T): T {
        if (arguments.length === 0) throw missing("typedArray");
        const tag = apply(typedArrayTag, array, []) as string | undefined;
        if (!isIntegerArray(tag)) {
          throw domError("The data argument must be an integer-type TypedArray", "TypeMismatchError");
        }
        const length = apply(typedArrayByteLength, array, []) as number;
        if (length > 65_536)
          throw domError("The requested length exceeds 65,536 bytes", "QuotaExceededError");
        randomFill(
          new Uint8ArrayCtor(
            apply(typedArrayBuffer, array, []) as ArrayBuffer,
            apply(typedArrayByteOffset, array, []) as number,
            length,
          ),
        );
        return array;
      }
      randomUUID(): string {
        const bytes = new Uint8ArrayCtor(16);
        randomFill(bytes);
        bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
        bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
        let text = "";
        for (let i = 0; i < 16; i++) {
          if (i === 4 || i === 6 || i === 8 || i === 10) text += "-";
          text += (HEX[(bytes[i] as number) >> 4] as string) + (HEX[(bytes[i] as number) & 15] as string);
        }
        return text;
      }
    }
    setTag(Crypto, "Crypto");

    // ---- performance -------------------------------------------------------
    class Performance {
      constructor() {
        if (!constructing) throw illegal();
      }
      get timeOrigin(): number {
        return timeOrigin;
      }
      now(): number {
        return now();
      }
      toJSON(): { timeOrigin: number } {
        return { timeOrigin };
      }
    }
    setTag(Performance, "Performance");

    const single = <T>(Ctor: new () => T): T => {
      constructing = true;
      try {
        return new Ctor();
      } finally {
        constructing = false;
      }
    };
    const made = objectCreate(null) as Record<string, unknown>;
    made.DOMException = DOMException;
    made.Event = Event;
    made.EventTarget = EventTarget;
    made.AbortController = AbortController;
    made.AbortSignal = AbortSignal;
    made.TextEncoder = TextEncoder;
    made.TextDecoder = TextDecoder;
    named(atob, "atob");
    named(btoa, "btoa");
    named(structuredClone, "structuredClone");
    made.atob = atob;
    made.btoa = btoa;
    made.structuredClone = structuredClone;
    made.crypto = single(Crypto);
    made.performance = single(Performance);
    return made;
  };
  let made: Record<string, unknown> | undefined;
  const names = [
    "DOMException",
    "Event",
    "EventTarget",
    "AbortController",
    "AbortSignal",
    "TextEncoder",
    "TextDecoder",
    "atob",
    "btoa",
    "structuredClone",
    "crypto",
    "performance",
  ];
  // Lazy globals as Node defines its own (`exposeLazyInterfaces`): an accessor that builds on
  // first read and that an assignment replaces with a data property. Defined here, not with
  // kit.defineGlobal (a data property turned accessor costs twice), so teardown removes them.
  const { deleteProperty } = Reflect;
  const accessor = objectCreate(null) as PropertyDescriptor;
  accessor.enumerable = false;
  accessor.configurable = true;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    accessor.get = () => {
      if (made === undefined) made = build();
      return made[name];
    };
    accessor.set = (value: unknown) => {
      defineProperty(G, name, dataDescriptor(value, false));
    };
    defineProperty(G, name, accessor);
  }
  // For a realm put back to an image taken right after install (QuickJS): this run's own entropy
  // for `crypto`, and `performance`'s time origin now. Nothing built from either exists yet
  // (the web globals are made on first read, and no guest code ran before the image).
  kit.entries.renew = (runEntropy: string) => {
    entropy = runEntropy;
    timeOrigin = apply(dateNow, DateCtor, []) as number;
    lastNow = 0;
  };
  const teardown = kit.entries.teardown;
  kit.entries.teardown = () => {
    for (let i = 0; i < names.length; i++) deleteProperty(G, names[i] as string);
    made = undefined;
    if (teardown !== undefined) teardown();
  };
}
