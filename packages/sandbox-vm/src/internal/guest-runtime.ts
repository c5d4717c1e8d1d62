import { randomBytes } from "node:crypto";
import { Script } from "node:vm";

/** Codes the guest runtime reports through `host.done(kind, payload)`. */
export const DONE = Object.freeze({
  /** payload: JSON text of the result. */
  VALUE: 0,
  /** payload: "" — the result is `undefined`. */
  UNDEFINED: 1,
  /** payload: the kind that cannot cross (`function`, `symbol`, `bigint`, `cyclic`). */
  NOT_TRANSFERABLE: 2,
  /** payload: the error text (`Name: message`, `String(value)` or JSON). */
  ERROR: 3,
});

/** Most timers one execution may have pending at once (each is a host timer). */
export const MAX_PENDING_TIMERS = 10_000;

/** File name user code is compiled under; the only frames guest stack traces show. */
export const GUEST_FILENAME = "sandbox.js";
/** Prefix of the file names of registered source modules. */
export const MODULE_FILENAME_PREFIX = "sandbox-module:";

/**
 * A per-process random suffix for the runtime's lexical binding: scripts run
 * in the same context reach it by name, user code cannot guess it, and it is
 * never a property of the global object (so reflection does not find it).
 */
const TOKEN = randomBytes(8).toString("hex");
/** The script-scope name of the guest runtime object. */
export const RUNTIME_BINDING = `__suaveplan_vm_${TOKEN}`;

/**
 * The guest-side runtime, evaluated first in every fresh context. It
 * captures the intrinsics it needs before any user code runs, installs
 * `console`, timers and `queueMicrotask` as guest-realm functions, locks
 * `Error.prepareStackTrace` to a formatter that shows only sandbox frames,
 * removes `FinalizationRegistry` (its callbacks would run after the
 * execution, outside any timeout) and reports back to the host with
 * primitives only. Host callbacks are kept in closures, called only inside
 * try/catch, so no host object or host error ever reaches user code.
 *
 * Its completion value is `install(host, contextJson, dataModulesJson)`.
 */
const RUNTIME_SOURCE = `"use strict";
const ${RUNTIME_BINDING} = (() => {
  const G = globalThis;
  const { apply, defineProperty, getOwnPropertyDescriptor } = Reflect;
  const { keys: objectKeys, create, freeze } = Object;
  const { isArray } = Array;
  const { isFinite } = Number;
  const { parse: jsonParse, stringify: jsonStringify } = JSON;
  const StringCtor = String;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const RangeErrorCtor = RangeError;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const symbolToString = Symbol.prototype.toString;
  const objectToString = Object.prototype.toString;
  const startsWith = String.prototype.startsWith;
  const resolved = new PromiseCtor((resolve) => resolve());

  let host = null;
  let outputOpen = true;
  let settled = false;
  const timers = create(null);
  let nextTimerId = 1;

  function NotTransferable(kind) { this.kind = kind; }

  function hostCall(name, a, b, c) {
    if (host === null) return undefined;
    try { return host[name](a, b, c); } catch { return undefined; }
  }

  // JSON text of a value, by JSON rules, refusing what cannot cross.
  function encode(value, stack, depth) {
    switch (typeof value) {
      case "undefined": return undefined;
      case "string": return jsonStringify(value);
      case "number": return isFinite(value) ? jsonStringify(value) : "null";
      case "boolean": return value ? "true" : "false";
      case "function": throw new NotTransferable("function");
      case "symbol": throw new NotTransferable("symbol");
      case "bigint": throw new NotTransferable("bigint");
    }
    if (value === null) return "null";
    for (let i = 0; i < depth; i++) if (stack[i] === value) throw new NotTransferable("cyclic");
    stack[depth] = value;
    const toJSON = value.toJSON;
    if (typeof toJSON === "function") return encode(apply(toJSON, value, []), stack, depth + 1);
    let out;
    if (isArray(value)) {
      out = "[";
      const length = value.length;
      for (let i = 0; i < length; i++) {
        const item = encode(value[i], stack, depth + 1);
        out += (i === 0 ? "" : ",") + (item === undefined ? "null" : item);
      }
      out += "]";
    } else {
      out = "{";
      const names = objectKeys(value);
      let first = true;
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        const item = encode(value[name], stack, depth + 1);
        if (item === undefined) continue;
        out += (first ? "" : ",") + jsonStringify(name) + ":" + item;
        first = false;
      }
      out += "}";
    }
    return out;
  }
  const toJson = (value) => encode(value, create(null), 0);

  function plainText(value) {
    if (typeof value === "symbol") return apply(symbolToString, value, []);
    if (typeof value === "bigint") return StringCtor(value) + "n";
    return StringCtor(value);
  }

  function errorText(error) {
    try {
      if (error !== null && (typeof error === "object" || typeof error === "function")) {
        const message = error.message;
        const name = error.name;
        if (error instanceof ErrorCtor || (typeof message === "string" && typeof name === "string")) {
          const label = typeof name === "string" && name !== "" ? name : "Error";
          const text = typeof message === "string" ? message : plainText(message);
          return text === "" ? label : label + ": " + text;
        }
        try {
          const json = toJson(error);
          if (json !== undefined) return json;
        } catch {}
        return apply(objectToString, error, []);
      }
      return plainText(error);
    } catch {
      return "an exception whose description threw";
    }
  }

  function describe(value) {
    if (typeof value === "string") return value;
    if (value !== null && typeof value === "object") {
      if (value instanceof ErrorCtor) return errorText(value);
      try {
        const json = toJson(value);
        if (json !== undefined) return json;
      } catch {}
      try { return apply(objectToString, value, []); } catch { return "[object]"; }
    }
    if (typeof value === "function") {
      let name = "";
      try { name = value.name; } catch {}
      return typeof name === "string" && name !== "" ? "[Function: " + name + "]" : "[Function (anonymous)]";
    }
    return plainText(value);
  }

  function report(kind, payload) {
    hostCall("done", kind, payload);
  }

  function fail(error) {
    report(${DONE.ERROR}, errorText(error));
  }

  function finish(value) {
    let json;
    try {
      json = toJson(value);
    } catch (error) {
      if (error instanceof NotTransferable) report(${DONE.NOT_TRANSFERABLE}, error.kind);
      else fail(error);
      return;
    }
    if (json === undefined) report(${DONE.UNDEFINED}, "");
    else report(${DONE.VALUE}, json);
  }

  function makeLogger(level) {
    return function (...args) {
      if (!outputOpen) return;
      let message = "";
      for (let i = 0; i < args.length; i++) message += (i === 0 ? "" : " ") + describe(args[i]);
      if (hostCall("log", level, message) === false) outputOpen = false;
    };
  }

  function delayOf(delay) {
    const ms = +delay;
    return ms >= 1 && ms <= 2147483647 ? ms : 1;
  }

  function addTimer(callback, delay, args, repeat) {
    if (typeof callback !== "function") {
      throw new TypeErrorCtor("The callback must be a function; code strings are not evaluated in the sandbox");
    }
    const id = nextTimerId++;
    if (hostCall("timer", id, delayOf(delay), repeat) !== true) {
      throw new RangeErrorCtor("Too many pending timers in the sandbox (limit ${MAX_PENDING_TIMERS})");
    }
    timers[id] = { callback, args, repeat };
    return id;
  }

  function clearTimer(id) {
    if (typeof id === "number" && timers[id] !== undefined) {
      delete timers[id];
      hostCall("clear", id);
    }
  }

  function define(name, value) {
    defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  }

  function prepareStackTrace(error, frames) {
    let text = errorText(error);
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i];
      let file;
      try { file = frame.getFileName(); } catch {}
      if (file === "${GUEST_FILENAME}" || (typeof file === "string" && apply(startsWith, file, ["${MODULE_FILENAME_PREFIX}"]))) {
        try { text += "\\n    at " + frame.toString(); } catch {}
      }
    }
    return text;
  }

  function install(hostApi, contextJson, modulesJson) {
    host = hostApi;
    define("console", freeze({
      log: makeLogger("log"),
      info: makeLogger("info"),
      warn: makeLogger("warn"),
      error: makeLogger("error"),
      debug: makeLogger("debug"),
    }));
    define("setTimeout", function setTimeout(callback, delay, ...args) { return addTimer(callback, delay, args, false); });
    define("setInterval", function setInterval(callback, delay, ...args) { return addTimer(callback, delay, args, true); });
    define("clearTimeout", function clearTimeout(id) { clearTimer(id); });
    define("clearInterval", function clearInterval(id) { clearTimer(id); });
    define("queueMicrotask", function queueMicrotask(callback) {
      if (typeof callback !== "function") throw new TypeErrorCtor("The callback must be a function");
      apply(promiseThen, resolved, [() => { try { callback(); } catch (error) { fail(error); } }]);
    });
    // Node formats a guest error's stack with globalThis.Error.prepareStackTrace of the guest realm:
    // pin both, so user code can neither read CallSites (host frames included) nor print host paths.
    defineProperty(ErrorCtor, "prepareStackTrace", { value: prepareStackTrace, writable: false, configurable: false, enumerable: false });
    defineProperty(G, "Error", { value: ErrorCtor, writable: false, configurable: false, enumerable: false });
    delete G.FinalizationRegistry;
    if (modulesJson !== "") {
      const modules = jsonParse(modulesJson);
      for (let i = 0; i < modules.length; i++) define(modules[i][0], modules[i][1]);
    }
    if (contextJson !== "") {
      const context = jsonParse(contextJson);
      const names = objectKeys(context);
      for (let i = 0; i < names.length; i++) define(names[i], context[names[i]]);
    }
  }

  return freeze({
    install,
    // Evaluate a registered source module and publish module.exports as a global.
    module(name, factory) {
      const module = { exports: {} };
      try {
        apply(factory, undefined, [module, module.exports]);
        define(name, module.exports);
      } catch (error) {
        report(${DONE.ERROR}, "module " + name + " failed: " + errorText(error));
      }
    },
    // Take the completion value from the host and report it (awaiting thenables).
    settle() {
      if (settled) return;
      settled = true;
      const value = hostCall("take");
      if (value !== null && (typeof value === "object" || typeof value === "function")) {
        let then;
        try { then = value.then; } catch (error) { fail(error); return; }
        if (typeof then === "function") {
          const promise = new PromiseCtor((resolve) => resolve(value));
          apply(promiseThen, promise, [finish, fail]);
          return;
        }
      }
      finish(value);
    },
    // Describe a value the user code threw.
    fail() {
      if (settled) return;
      settled = true;
      fail(hostCall("take"));
    },
    // Run the timers the host says are due.
    fire() {
      for (;;) {
        const id = hostCall("next");
        if (typeof id !== "number" || id <= 0) return;
        const timer = timers[id];
        if (timer === undefined) continue;
        if (!timer.repeat) delete timers[id];
        try { apply(timer.callback, undefined, timer.args); } catch (error) { fail(error); return; }
      }
    },
  });
})();
${RUNTIME_BINDING}.install;
`;

/** Compiled once per process; context-independent. */
export const runtimeScript = new Script(RUNTIME_SOURCE, { filename: "suaveplan-vm-runtime.js" });
/** Hands the completion value to the runtime. */
export const settleScript = new Script(`${RUNTIME_BINDING}.settle();`, {
  filename: "suaveplan-vm-settle.js",
});
/** Describes a thrown value. */
export const failScript = new Script(`${RUNTIME_BINDING}.fail();`, { filename: "suaveplan-vm-fail.js" });
/** Runs due timers. */
export const fireScript = new Script(`${RUNTIME_BINDING}.fire();`, { filename: "suaveplan-vm-fire.js" });

/** Source of a script that evaluates a registered source module inside the runtime. */
export function moduleScriptSource(name: string, source: string): string {
  // The wrapper opens on the first line so line numbers in errors match the module source.
  return `${RUNTIME_BINDING}.module(${JSON.stringify(name)}, function (module, exports) {${source}\n});`;
}
