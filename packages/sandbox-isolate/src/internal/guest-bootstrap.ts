/**
 * Guest-side bootstrap, compiled once per isolate and run once in every fresh
 * context before user code.
 *
 * The host puts exactly one global on the new context, {@link PAYLOAD_GLOBAL}:
 * a structured copy of the code, context and modules whose `host` member is
 * an isolated-vm `Callback` (a plain function inside the isolate). The
 * bootstrap's first statements capture it into closure variables and delete
 * the global, so user code never sees an isolated-vm object or the callback. Everything the guest can reach afterwards (console, timers)
 * is a strict-mode guest function that closes over the callback; strict mode
 * keeps `fn.caller`, `arguments.callee` and stack-trace `getFunction()` from
 * handing a bootstrap function (and through it the callback) to user code.
 *
 * Built-ins are captured before user code runs and called through
 * `Reflect.apply`, so user code that patches `Array.prototype` or `Promise`
 * can break its own result but cannot redirect the bootstrap. The callback is
 * only ever called directly, never looked up on or passed to a guest object.
 *
 * Host calls (`host(op, …)`) are isolated-vm callbacks in "ignored" mode:
 * the arguments are copied out at once and the host function is queued on
 * the host's event loop in call order, ahead of the completion of the isolate
 * call that made them, so the guest never blocks on the host and never sees a
 * host return value or error. `"l"` log line, `"t"` arm timer, `"c"` clear
 * timer, `"L"` line cap reached, `"d"` outcome. Every kind is bounded per
 * execution (bytes and lines of output, pending and created timers, one
 * outcome), so guest code cannot flood the host's queue. The script's completion value is the `fire(id)`
 * function the host calls, by `Reference`, when a timer is due.
 *
 * @internal
 */

/** Global holding the payload copy until the bootstrap deletes it. */
export const PAYLOAD_GLOBAL = "__suaveplanPayload";

/** A module as the guest receives it. */
export interface GuestModule {
  name: string;
  exports: unknown;
  source: string | undefined;
}

/** What the host copies into the context. */
export interface GuestPayload {
  /** The host callback (an ignored-mode isolated-vm `Callback`). */
  host: unknown;
  /** Prepared user code (see `toGuestScript`). */
  code: string;
  /** Console budget in UTF-8 bytes. */
  maxOutputSize: number;
  /** Pending timers allowed at once (the guest enforces it; the host drops extras). */
  maxTimers: number;
  /** Timers one execution may create in total, so a create/clear loop cannot flood the host. */
  maxTimerCreations: number;
  /** Console lines one execution may send, so empty lines cannot flood the host. */
  maxLogLines: number;
  /** What copying the result may cost the host, in bytes (the memory limit). */
  maxResultBytes: number;
  /** Values installed as globals after the modules (key always present, so no prototype lookup). */
  context: Record<string, unknown> | undefined;
  /** Modules installed as globals, in registration order (every key always present). */
  modules: GuestModule[] | undefined;
}

/** The bootstrap source. Plain ES2022; no backticks inside. */
export const GUEST_BOOTSTRAP_SOURCE = String.raw`"use strict";
(function bootstrap(global) {
  const payload = global.${PAYLOAD_GLOBAL};
  delete global.${PAYLOAD_GLOBAL};
  const host = payload.host;
  payload.host = undefined;

  const ReflectApply = Reflect.apply;
  const ObjectCreate = Object.create;
  const ObjectKeys = Object.keys;
  const ObjectHasOwn = Object.hasOwn;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
  const ObjectPrototypeToString = Object.prototype.toString;
  const ArrayIsArray = Array.isArray;
  const ArrayBufferIsView = ArrayBuffer.isView;
  const StringCtor = String;
  const StringPrototypeSlice = String.prototype.slice;
  const StringPrototypeCharCodeAt = String.prototype.charCodeAt;
  const SymbolPrototypeToString = Symbol.prototype.toString;
  const FunctionPrototypeToString = Function.prototype.toString;
  const DatePrototypeToISOString = Date.prototype.toISOString;
  const DatePrototypeGetTime = Date.prototype.getTime;
  const RegExpSource = ObjectGetOwnPropertyDescriptor(RegExp.prototype, "source").get;
  const RegExpFlags = ObjectGetOwnPropertyDescriptor(RegExp.prototype, "flags").get;
  const NumberParseInt = Number.parseInt;
  const NumberParseFloat = Number.parseFloat;
  const NumberCtor = Number;
  const JSONStringify = JSON.stringify;
  const SetCtor = Set;
  const SetPrototypeAdd = Set.prototype.add;
  const SetPrototypeHas = Set.prototype.has;
  const SetPrototypeDelete = Set.prototype.delete;
  const SetPrototypeForEach = Set.prototype.forEach;
  const SetPrototypeSize = ObjectGetOwnPropertyDescriptor(Set.prototype, "size").get;
  const MapPrototypeForEach = Map.prototype.forEach;
  const MapPrototypeSize = ObjectGetOwnPropertyDescriptor(Map.prototype, "size").get;
  const SharedArrayBufferByteLength = ObjectGetOwnPropertyDescriptor(SharedArrayBuffer.prototype, "byteLength").get;
  const ArrayBufferByteLength = ObjectGetOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
  const MapCtor = Map;
  const MapPrototypeHas = Map.prototype.has;
  const MapPrototypeGet = Map.prototype.get;
  const MapPrototypeSet = Map.prototype.set;
  const WeakMapPrototypeHas = WeakMap.prototype.has;
  const WeakSetPrototypeHas = WeakSet.prototype.has;
  const WeakRefPrototypeDeref = typeof WeakRef === "function" ? WeakRef.prototype.deref : undefined;
  const NumberPrototypeValueOf = Number.prototype.valueOf;
  const StringPrototypeValueOf = String.prototype.valueOf;
  const BooleanPrototypeValueOf = Boolean.prototype.valueOf;
  const PromisePrototypeThen = Promise.prototype.then;
  const TypedArrayBuffer = ObjectGetOwnPropertyDescriptor(ObjectGetPrototypeOf(Uint8Array.prototype), "buffer").get;
  const DataViewBuffer = ObjectGetOwnPropertyDescriptor(DataView.prototype, "buffer").get;
  const WasmMemoryBuffer =
    typeof WebAssembly === "object" ? ObjectGetOwnPropertyDescriptor(WebAssembly.Memory.prototype, "buffer").get : undefined;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const indirectEval = global.eval;

  // V8 runs these callbacks as isolate tasks, outside any timed isolate call:
  // on the next entry (a host-thread createContextSync for the next run, say),
  // where a loop would block the host for good or a late Atomics.waitAsync
  // timeout aborts the process. Remove them; async WebAssembly compiles
  // synchronously instead, inside the timed call.
  delete global.FinalizationRegistry;
  delete Atomics.waitAsync;
  if (typeof WebAssembly === "object") {
    const WasmModule = WebAssembly.Module;
    const WasmInstance = WebAssembly.Instance;
    const WasmModuleExports = WasmModule.exports;
    const wasm = (name, fn) =>
      ObjectDefineProperty(WebAssembly, name, { __proto__: null, value: fn, writable: true, enumerable: false, configurable: true });
    wasm("compile", async function compile(bytes) {
      return new WasmModule(bytes);
    });
    wasm("instantiate", async function instantiate(source, imports) {
      let isModule = true;
      try {
        WasmModuleExports(source);
      } catch {
        isModule = false;
      }
      if (isModule) return new WasmInstance(source, imports);
      const module = new WasmModule(source);
      return { module: module, instance: new WasmInstance(module, imports) };
    });
  }

  const budget = payload.maxOutputSize;
  const maxTimers = payload.maxTimers;
  const maxTimerCreations = payload.maxTimerCreations;
  const maxLogLines = payload.maxLogLines;
  const maxResultBytes = payload.maxResultBytes;

  // Descriptors and records below have a null prototype, so a poisoned
  // Object.prototype (a "get" or "value" accessor, say) is never consulted.
  function define(name, value) {
    ObjectDefineProperty(global, name, { __proto__: null, value: value, writable: true, enumerable: false, configurable: true });
  }

  function ownValue(object, key) {
    const descriptor = ObjectGetOwnPropertyDescriptor(object, key);
    return descriptor !== undefined && ObjectHasOwn(descriptor, "value") ? descriptor.value : undefined;
  }

  function slice(text, start, end) {
    return ReflectApply(StringPrototypeSlice, text, [start, end]);
  }

  function charCode(text, index) {
    return ReflectApply(StringPrototypeCharCodeAt, text, [index]);
  }

  function utf8Length(text, limit) {
    let bytes = 0;
    const length = text.length;
    for (let i = 0; i < length && bytes <= limit; i++) {
      const code = charCode(text, i);
      if (code < 0x80) bytes += 1;
      else if (code < 0x800) bytes += 2;
      else if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
        const next = charCode(text, i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          bytes += 4;
          i++;
        } else bytes += 3;
      } else bytes += 3;
    }
    return bytes;
  }

  // Brand checks call a captured built-in on the value: no lookups on it.
  function brand(getter, value) {
    try {
      ReflectApply(getter, value, []);
      return true;
    } catch {
      return false;
    }
  }

  function isError(value) {
    try {
      return ReflectApply(ObjectPrototypeToString, value, []) === "[object Error]";
    } catch {
      return false;
    }
  }

  // ---- console formatting: a compact, single-line util.inspect ----

  function isIdentifier(key) {
    if (key.length === 0) return false;
    for (let i = 0; i < key.length; i++) {
      const c = charCode(key, i);
      const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95;
      if (!letter && !(i > 0 && c >= 48 && c <= 57)) return false;
    }
    return true;
  }

  function isIndex(key) {
    if (key.length === 0 || (key.length > 1 && charCode(key, 0) === 48)) return false;
    for (let i = 0; i < key.length; i++) {
      const c = charCode(key, i);
      if (c < 48 || c > 57) return false;
    }
    return true;
  }

  function quote(text) {
    let out = "'";
    for (let i = 0; i < text.length; i++) {
      const char = text[i];
      if (char === "'" || char === "\\") out += "\\" + char;
      else if (char === "\n") out += "\\n";
      else if (char === "\r") out += "\\r";
      else if (char === "\t") out += "\\t";
      else out += char;
    }
    return out + "'";
  }

  function functionLabel(fn) {
    let source = "";
    try {
      source = ReflectApply(FunctionPrototypeToString, fn, []);
    } catch {}
    let name = "";
    try {
      const value = ownValue(fn, "name");
      if (typeof value === "string") name = value;
    } catch {}
    const label = name === "" ? "(anonymous)" : name;
    return slice(source, 0, 5) === "class" ? "[class " + label + "]" : "[Function: " + label + "]";
  }

  function errorLabel(error) {
    try {
      const stack = error.stack;
      if (typeof stack === "string" && stack !== "") return stack;
    } catch {}
    return describeError(error);
  }

  function constructorName(value) {
    try {
      const proto = ObjectGetPrototypeOf(value);
      if (proto === null) return null;
      const ctor = ownValue(proto, "constructor");
      if (typeof ctor === "function") {
        const name = ownValue(ctor, "name");
        if (typeof name === "string") return name;
      }
    } catch {}
    return "";
  }

  function inspect(value, depth, state, nested) {
    if (state.left <= 0) return "...";
    const type = typeof value;
    let out;
    if (type === "string") out = nested ? quote(value) : value;
    else if (type === "number") out = value === 0 && 1 / value < 0 ? "-0" : StringCtor(value);
    else if (type === "bigint") out = StringCtor(value) + "n";
    else if (type === "symbol") out = ReflectApply(SymbolPrototypeToString, value, []);
    else if (type === "function") out = functionLabel(value);
    else if (value === null || type !== "object") out = StringCtor(value);
    else out = inspectObject(value, depth, state);
    state.left -= out.length;
    return out;
  }

  function inspectObject(value, depth, state) {
    if (ReflectApply(SetPrototypeHas, state.seen, [value])) return "[Circular]";
    if (isError(value)) return errorLabel(value);
    if (brand(DatePrototypeGetTime, value)) {
      try {
        return ReflectApply(DatePrototypeToISOString, value, []);
      } catch {
        return "Invalid Date";
      }
    }
    if (brand(RegExpSource, value)) {
      try {
        return "/" + ReflectApply(RegExpSource, value, []) + "/" + ReflectApply(RegExpFlags, value, []);
      } catch {
        return "[RegExp]";
      }
    }
    const array = ArrayIsArray(value);
    const map = !array && brand(MapPrototypeSize, value);
    const set = !array && !map && brand(SetPrototypeSize, value);
    const name = constructorName(value);
    if (depth > 2) return array ? "[Array]" : "[" + (name === null || name === "" ? "Object" : name) + "]";
    ReflectApply(SetPrototypeAdd, state.seen, [value]);
    const run = { __proto__: null, body: "", count: 0, more: 0 };
    const add = (part) => {
      run.body = run.count === 0 ? part : run.body + ", " + part;
      run.count++;
    };
    if (map) {
      ReflectApply(MapPrototypeForEach, value, [
        (entry, key) => {
          if (run.count >= 100 || state.left <= 0) run.more++;
          else add(inspect(key, depth + 1, state, true) + " => " + inspect(entry, depth + 1, state, true));
        },
      ]);
    } else if (set) {
      ReflectApply(SetPrototypeForEach, value, [
        (entry) => {
          if (run.count >= 100 || state.left <= 0) run.more++;
          else add(inspect(entry, depth + 1, state, true));
        },
      ]);
    } else {
      const keys = ObjectKeys(value);
      for (let i = 0; i < keys.length; i++) {
        if (run.count >= 100 || state.left <= 0) {
          run.more = keys.length - i;
          break;
        }
        const key = keys[i];
        const descriptor = ObjectGetOwnPropertyDescriptor(value, key);
        if (descriptor === undefined) continue;
        let shown;
        if (ObjectHasOwn(descriptor, "value")) shown = inspect(descriptor.value, depth + 1, state, true);
        else if (descriptor.get !== undefined) shown = descriptor.set !== undefined ? "[Getter/Setter]" : "[Getter]";
        else shown = "[Setter]";
        if (array && isIndex(key)) add(shown);
        else add((isIdentifier(key) ? key : quote(key)) + ": " + shown);
      }
    }
    ReflectApply(SetPrototypeDelete, state.seen, [value]);
    if (run.more > 0) add("... " + run.more + " more item" + (run.more === 1 ? "" : "s"));
    if (array) return run.count === 0 ? "[]" : "[ " + run.body + " ]";
    let prefix = "";
    if (map) prefix = "Map(" + ReflectApply(MapPrototypeSize, value, []) + ") ";
    else if (set) prefix = "Set(" + ReflectApply(SetPrototypeSize, value, []) + ") ";
    else if (name === null) prefix = "[Object: null prototype] ";
    else if (name !== "Object") prefix = (name === "" ? "Object" : name) + " ";
    return prefix + (run.count === 0 ? "{}" : "{ " + run.body + " }");
  }

  function formatArgs(args, limit) {
    const state = { __proto__: null, left: limit, seen: new SetCtor() };
    let out = "";
    let start = 0;
    const first = args[0];
    if (typeof first === "string" && args.length > 1) {
      let next = 1;
      let i = 0;
      while (i < first.length && out.length <= limit) {
        const char = first[i];
        const spec = i + 1 < first.length ? first[i + 1] : "";
        if (char === "%" && spec === "%") {
          out += "%";
          i += 2;
        } else if (char === "%" && next < args.length && (spec === "s" || spec === "d" || spec === "i" || spec === "f" || spec === "j" || spec === "o" || spec === "O" || spec === "c")) {
          const arg = args[next++];
          if (spec === "s") out += typeof arg === "string" ? arg : inspect(arg, 1, state, false);
          else if (spec === "d") out += typeof arg === "bigint" ? StringCtor(arg) + "n" : StringCtor(NumberCtor(arg));
          else if (spec === "i") out += typeof arg === "bigint" ? StringCtor(arg) + "n" : StringCtor(NumberParseInt(arg));
          else if (spec === "f") out += StringCtor(NumberParseFloat(arg));
          else if (spec === "j") {
            try {
              out += JSONStringify(arg);
            } catch {
              out += "[Circular]";
            }
          } else if (spec !== "c") out += inspect(arg, 0, state, true);
          i += 2;
        } else {
          out += char;
          i++;
        }
      }
      state.left -= out.length;
      start = next;
    } else if (args.length > 0) {
      out = inspect(first, 0, state, false);
      start = 1;
    }
    for (let i = start; i < args.length && state.left > 0; i++) out += " " + inspect(args[i], 0, state, false);
    return out;
  }

  // ---- console: streamed to the host, capped here so a flood never crosses ----

  let usedBytes = 0;
  let lines = 0;
  let capped = false;

  function emit(level, args) {
    if (capped) return;
    if (lines >= maxLogLines) {
      capped = true;
      host("L");
      return;
    }
    lines++;
    const room = budget - usedBytes;
    let message;
    try {
      message = formatArgs(args, room + 1);
    } catch (error) {
      message = "[unprintable value: " + describeThrown(error) + "]";
    }
    if (typeof message !== "string") message = "";
    const size = utf8Length(message, room);
    if (size > room) {
      capped = true;
      message = slice(message, 0, room + 1);
    } else usedBytes += size;
    host("l", level, message);
  }

  const console = {
    log(...args) {
      emit("log", args);
    },
    info(...args) {
      emit("info", args);
    },
    warn(...args) {
      emit("warn", args);
    },
    error(...args) {
      emit("error", args);
    },
    debug(...args) {
      emit("debug", args);
    },
  };
  define("console", console);

  // ---- outcome ----

  let delivered = false;
  let failed = false;

  function describeError(error) {
    let name = "Error";
    let message = "";
    try {
      const n = error.name;
      if (typeof n === "string" && n !== "") name = n;
    } catch {}
    try {
      const m = error.message;
      message = typeof m === "string" ? m : StringCtor(m);
    } catch {}
    return message === "" ? name : name + ": " + message;
  }

  function describeThrown(thrown) {
    try {
      const type = typeof thrown;
      if (thrown !== null && (type === "object" || type === "function")) {
        if (isError(thrown)) return describeError(thrown);
        if (type === "object") {
          try {
            const json = JSONStringify(thrown);
            if (typeof json === "string") return json;
          } catch {}
        }
        return inspect(thrown, 0, { left: budget, seen: new SetCtor() }, true);
      }
      if (type === "symbol") return ReflectApply(SymbolPrototypeToString, thrown, []);
      return StringCtor(thrown);
    } catch {
      return "an exception whose message could not be read";
    }
  }

  function clip(text) {
    return text.length > budget ? slice(text, 0, budget) : text;
  }

  function fail(thrown, kind) {
    if (failed) return;
    failed = true;
    host("d", false, clip(describeThrown(thrown)), kind === undefined ? "thrown" : kind);
  }

  function failTransfer(reason) {
    if (failed) return;
    failed = true;
    host("d", false, clip("result is not transferable: " + reason), "transfer");
  }

  // What the copy will cost the host, in bytes (strings as UTF-16, 8 per value):
  // every reference to a string is copied again, so each one counts.
  function untransferable(root) {
    const rootType = typeof root;
    if (rootType === "string") return root.length * 2 > maxResultBytes ? tooLarge() : undefined;
    if (root === null || (rootType !== "object" && rootType !== "function" && rootType !== "symbol" && rootType !== "bigint")) {
      return undefined;
    }
    const path = new SetCtor();
    const done = new SetCtor();
    let used = 0;
    function charge(bytes) {
      used += bytes;
      return used > maxResultBytes ? tooLarge() : undefined;
    }
    function walk(value, depth) {
      const type = typeof value;
      if (type === "function") return "function";
      if (type === "symbol") return "symbol";
      if (type === "bigint") return "bigint";
      if (type === "string") return charge(8 + value.length * 2);
      if (type !== "object" || value === null) return charge(8);
      if (ReflectApply(SetPrototypeHas, path, [value])) return "cyclic";
      // An object referenced again is copied once (structured clone keeps identity).
      if (ReflectApply(SetPrototypeHas, done, [value])) return charge(8);
      ReflectApply(SetPrototypeAdd, done, [value]);
      // Shared memory would stay shared with the host instead of being copied.
      if (brand(SharedArrayBufferByteLength, value)) return "SharedArrayBuffer";
      if (brand(WasmMemoryBuffer, value)) return "WebAssembly.Memory";
      if (brand(ArrayBufferByteLength, value)) return charge(ReflectApply(ArrayBufferByteLength, value, []));
      if (ArrayBufferIsView(value)) {
        let buffer;
        try {
          buffer = ReflectApply(TypedArrayBuffer, value, []);
        } catch {
          buffer = ReflectApply(DataViewBuffer, value, []);
        }
        if (brand(SharedArrayBufferByteLength, buffer)) return "SharedArrayBuffer";
        return charge(ReflectApply(ArrayBufferByteLength, buffer, []));
      }
      if (depth > 1000) return "nested deeper than 1000 levels";
      ReflectApply(SetPrototypeAdd, path, [value]);
      let found = charge(8);
      if (found === undefined && isError(value)) {
        // Copied though not enumerable.
        const stack = value.stack;
        const message = value.message;
        found = charge((typeof stack === "string" ? stack.length : 0) * 2 + (typeof message === "string" ? message.length : 0) * 2);
        if (found === undefined && ObjectHasOwn(value, "cause")) found = walk(value.cause, depth + 1);
      }
      if (found !== undefined) {
        // nothing more to look at
      } else if (brand(MapPrototypeSize, value)) {
        ReflectApply(MapPrototypeForEach, value, [
          (entry, key) => {
            if (found === undefined) found = walk(key, depth + 1);
            if (found === undefined) found = walk(entry, depth + 1);
          },
        ]);
      } else if (brand(SetPrototypeSize, value)) {
        ReflectApply(SetPrototypeForEach, value, [
          (entry) => {
            if (found === undefined) found = walk(entry, depth + 1);
          },
        ]);
      } else {
        const keys = ObjectKeys(value);
        for (let i = 0; i < keys.length && found === undefined; i++) {
          found = charge(keys[i].length * 2);
          if (found === undefined) found = walk(value[keys[i]], depth + 1);
        }
      }
      ReflectApply(SetPrototypeDelete, path, [value]);
      return found;
    }
    try {
      return walk(root, 0);
    } catch (error) {
      return describeThrown(error);
    }
  }

  function tooLarge() {
    return "larger than the memory limit of " + maxResultBytes + " bytes";
  }

  // A copy of the result made of fresh objects with data properties only,
  // reading every getter, proxy trap and error field exactly once. Leaves
  // (buffers, views, dates, regexps, boxed primitives) are kept: they are
  // copied from internal slots. Afterwards no guest code can run, so the
  // check below and the copy to the host see the same value.
  const refusal = ObjectCreate(null);
  let refused = "";
  function refuse(reason) {
    refused = reason;
    throw refusal;
  }

  function snapshot(root) {
    const copies = new MapCtor();
    const path = new SetCtor();
    function put(value) {
      return { __proto__: null, value: value, writable: true, enumerable: true, configurable: true };
    }
    function copy(value, depth) {
      const type = typeof value;
      if (type === "function") refuse("function");
      if (type === "symbol") refuse("symbol");
      if (type === "bigint") refuse("bigint");
      if (type !== "object" || value === null) return value;
      if (ReflectApply(SetPrototypeHas, path, [value])) refuse("cyclic");
      if (ReflectApply(MapPrototypeHas, copies, [value])) return ReflectApply(MapPrototypeGet, copies, [value]);
      if (
        brand(ArrayBufferByteLength, value) ||
        brand(SharedArrayBufferByteLength, value) ||
        ArrayBufferIsView(value) ||
        brand(DatePrototypeGetTime, value) ||
        brand(RegExpSource, value) ||
        brand(NumberPrototypeValueOf, value) ||
        brand(StringPrototypeValueOf, value) ||
        brand(BooleanPrototypeValueOf, value) ||
        brand(WasmMemoryBuffer, value)
      ) {
        return value;
      }
      if (weak(WeakMapPrototypeHas, value)) refuse("TypeError: #<WeakMap> could not be cloned.");
      if (weak(WeakSetPrototypeHas, value)) refuse("TypeError: #<WeakSet> could not be cloned.");
      if (brand(PromisePrototypeThen, value)) refuse("TypeError: #<Promise> could not be cloned.");
      if (WeakRefPrototypeDeref !== undefined && brand(WeakRefPrototypeDeref, value)) {
        refuse("TypeError: #<WeakRef> could not be cloned.");
      }
      if (depth > 1000) refuse("nested deeper than 1000 levels");
      ReflectApply(SetPrototypeAdd, path, [value]);
      let out;
      if (isError(value)) {
        const name = value.name;
        const message = value.message;
        const stack = value.stack;
        out = new ErrorCtor(typeof message === "string" ? message : "");
        ReflectApply(MapPrototypeSet, copies, [value, out]);
        ObjectDefineProperty(out, "name", put(typeof name === "string" ? name : "Error"));
        ObjectDefineProperty(out, "stack", put(typeof stack === "string" ? stack : ""));
        if (ObjectHasOwn(value, "cause")) ObjectDefineProperty(out, "cause", put(copy(value.cause, depth + 1)));
      } else if (brand(MapPrototypeSize, value)) {
        out = new MapCtor();
        ReflectApply(MapPrototypeSet, copies, [value, out]);
        const entries = [];
        ReflectApply(MapPrototypeForEach, value, [
          (entry, key) => {
            ObjectDefineProperty(entries, entries.length, put(key));
            ObjectDefineProperty(entries, entries.length, put(entry));
          },
        ]);
        for (let i = 0; i < entries.length; i += 2) {
          ReflectApply(MapPrototypeSet, out, [copy(entries[i], depth + 1), copy(entries[i + 1], depth + 1)]);
        }
      } else if (brand(SetPrototypeSize, value)) {
        out = new SetCtor();
        ReflectApply(MapPrototypeSet, copies, [value, out]);
        const entries = [];
        ReflectApply(SetPrototypeForEach, value, [
          (entry) => {
            ObjectDefineProperty(entries, entries.length, put(entry));
          },
        ]);
        for (let i = 0; i < entries.length; i++) ReflectApply(SetPrototypeAdd, out, [copy(entries[i], depth + 1)]);
      } else {
        const array = ArrayIsArray(value);
        out = array ? [] : {};
        ReflectApply(MapPrototypeSet, copies, [value, out]);
        if (array) ObjectDefineProperty(out, "length", { __proto__: null, value: value.length, writable: true });
        const keys = ObjectKeys(value);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i];
          ObjectDefineProperty(out, key, put(copy(value[key], depth + 1)));
        }
      }
      ReflectApply(SetPrototypeDelete, path, [value]);
      return out;
    }
    return copy(root, 0);
  }

  // WeakMap/WeakSet brand checks that never throw for a real one.
  function weak(has, value) {
    try {
      ReflectApply(has, value, [refusal]);
      return true;
    } catch {
      return false;
    }
  }

  function deliver(result) {
    if (delivered || failed) return;
    delivered = true;
    let value;
    try {
      value = snapshot(result);
    } catch (error) {
      return failTransfer(error === refusal ? refused : describeThrown(error));
    }
    const problem = untransferable(value);
    if (problem !== undefined) return failTransfer(problem);
    try {
      host("d", true, value);
    } catch (error) {
      failTransfer(describeThrown(error));
    }
  }

  // An async function instead of Promise.prototype.then: awaiting looks up
  // nothing on our own promises (no "constructor" or species lookups).
  async function settle(value) {
    let resolved;
    try {
      resolved = await value;
    } catch (error) {
      return fail(error);
    }
    deliver(resolved);
  }

  // ---- timers: scheduled by the host, run here; all cancelled when the execution ends ----

  const timers = ObjectCreate(null);
  let pendingTimers = 0;
  let createdTimers = 0;
  let nextTimerId = 1;

  function addTimer(callback, delay, args, repeat) {
    if (typeof callback !== "function") {
      throw new TypeErrorCtor('The "callback" argument must be of type function');
    }
    if (pendingTimers >= maxTimers) {
      throw new RangeErrorCtor("Too many pending timers: the sandbox allows " + maxTimers);
    }
    if (createdTimers >= maxTimerCreations) {
      throw new RangeErrorCtor("Too many timers created: the sandbox allows " + maxTimerCreations + " per execution");
    }
    createdTimers++;
    let ms = NumberCtor(delay);
    if (!(ms >= 1 && ms <= 2147483647)) ms = 1;
    const id = nextTimerId++;
    timers[id] = { __proto__: null, callback: callback, args: args, repeat: repeat };
    pendingTimers++;
    host("t", id, ms, repeat);
    return id;
  }

  function clearTimer(id) {
    if (typeof id !== "number" || timers[id] === undefined) return;
    delete timers[id];
    pendingTimers--;
    host("c", id);
  }

  define("setTimeout", function setTimeout(callback, delay, ...args) {
    return addTimer(callback, delay, args, false);
  });
  define("setInterval", function setInterval(callback, delay, ...args) {
    return addTimer(callback, delay, args, true);
  });
  define("clearTimeout", function clearTimeout(id) {
    clearTimer(id);
  });
  define("clearInterval", function clearInterval(id) {
    clearTimer(id);
  });
  define("queueMicrotask", function queueMicrotask(callback) {
    if (typeof callback !== "function") {
      throw new TypeErrorCtor('The "callback" argument must be of type function');
    }
    runMicrotask(callback);
  });

  async function runMicrotask(callback) {
    await undefined;
    try {
      ReflectApply(callback, undefined, []);
    } catch (error) {
      fail(error);
    }
  }

  function fire(id) {
    const timer = timers[id];
    if (timer === undefined) return;
    if (!timer.repeat) {
      delete timers[id];
      pendingTimers--;
    }
    try {
      ReflectApply(timer.callback, undefined, timer.args);
    } catch (error) {
      fail(error);
    }
  }

  // ---- modules, context, then the user's code ----

  try {
    const modules = payload.modules;
    if (modules !== undefined) {
      for (let i = 0; i < modules.length; i++) {
        const mod = modules[i];
        let value = mod.exports;
        if (typeof mod.source === "string") {
          const module = { exports: value === undefined ? {} : value };
          // "module" is the guest's own object; only its exports are read back.
          let factory;
          try {
            factory = indirectEval("(function (module, exports) {" + mod.source + "\n})");
            ReflectApply(factory, module.exports, [module, module.exports]);
          } catch (error) {
            throw new ErrorCtor("module " + mod.name + " failed to load: " + describeThrown(error));
          }
          value = module.exports;
        }
        define(mod.name, value);
      }
    }
    const context = payload.context;
    if (context !== undefined) {
      const keys = ObjectKeys(context);
      for (let i = 0; i < keys.length; i++) define(keys[i], context[keys[i]]);
    }
  } catch (error) {
    fail(error);
    return fire;
  }

  let completion;
  try {
    completion = indirectEval(payload.code + "\n//# sourceURL=sandbox.js");
  } catch (error) {
    // A SyntaxError here may be the code failing to parse: the host then
    // compiles it once more to report the line (eval errors carry none).
    let syntax = false;
    try {
      syntax = isError(error) && error.name === "SyntaxError";
    } catch {}
    fail(error, syntax ? "syntax" : "thrown");
    return fire;
  }
  if (completion !== null && (typeof completion === "object" || typeof completion === "function")) {
    settle(completion);
  } else deliver(completion);
  return fire;
})(globalThis);
`;
