import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. Runs last. Deletes every global that is not an ECMAScript intrinsic on the
 * allowlist (V8's `console`, `WebAssembly`, `SharedArrayBuffer`, `Atomics`,
 * `FinalizationRegistry` — whose callbacks would run outside the timed drains), installs the
 * FrozenGlobals as non-writable, non-configurable properties, freezes every intrinsic reachable
 * from the global object (plus the hidden ones the other parts registered), and finally freezes
 * the global object itself — a real `Object.freeze`, possible because the context is created with
 * `vm.constants.DONT_CONTEXTIFY` (an ordinary global without interceptors).
 *
 * Freezing `Object.prototype` and the error prototypes would make ordinary assignments such as
 * `this.name = "MyError"` fail (the "override mistake"), so those few data properties are turned
 * into accessors whose setter defines an own property on the receiver instead.
 */
export function installGuestLockdown(kit: GuestKit): void {
  const ECMASCRIPT = [
    "globalThis",
    "Infinity",
    "NaN",
    "undefined",
    "isFinite",
    "isNaN",
    "parseFloat",
    "parseInt",
    "decodeURI",
    "decodeURIComponent",
    "encodeURI",
    "encodeURIComponent",
    "escape",
    "unescape",
    "Object",
    "Boolean",
    "Symbol",
    "Error",
    "AggregateError",
    "EvalError",
    "RangeError",
    "ReferenceError",
    "SyntaxError",
    "TypeError",
    "URIError",
    "Number",
    "BigInt",
    "Math",
    "Date",
    "String",
    "RegExp",
    "Array",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "WeakRef",
    "ArrayBuffer",
    "DataView",
    "JSON",
    "Promise",
    "Reflect",
    "Proxy",
    "Intl",
  ];
  const g = globalThis as unknown as Record<PropertyKey, unknown>;
  const keep = new Set<PropertyKey>(ECMASCRIPT);
  for (const key of Reflect.ownKeys(g)) {
    if (!keep.has(key)) Reflect.deleteProperty(g, key);
  }
  for (const name of Object.keys(kit.globals)) {
    Object.defineProperty(g, name, {
      value: kit.globals[name],
      writable: false,
      enumerable: false,
      configurable: false,
    });
  }

  const tame = (target: object, names: readonly string[]) => {
    for (const name of names) {
      const descriptor = Object.getOwnPropertyDescriptor(target, name);
      if (descriptor === undefined || !("value" in descriptor)) continue;
      const value = descriptor.value as unknown;
      Object.defineProperty(target, name, {
        get() {
          return value;
        },
        set(this: object, next: unknown) {
          if (this === target)
            throw new TypeError(`Cannot assign to read only property '${name}' of a frozen intrinsic`);
          Object.defineProperty(this, name, {
            value: next,
            writable: true,
            enumerable: true,
            configurable: true,
          });
        },
        enumerable: descriptor.enumerable === true,
        configurable: false,
      });
    }
  };
  tame(Object.prototype, [
    "constructor",
    "toString",
    "toLocaleString",
    "valueOf",
    "hasOwnProperty",
    "isPrototypeOf",
    "propertyIsEnumerable",
  ]);
  for (const E of [
    Error,
    EvalError,
    RangeError,
    ReferenceError,
    SyntaxError,
    TypeError,
    URIError,
    AggregateError,
  ]) {
    tame(E.prototype, ["name", "message", "constructor", "toString"]);
  }
  tame(Function.prototype, ["toString"]);

  const arrayIterator = Object.getPrototypeOf([][Symbol.iterator]()) as object;
  const hidden: unknown[] = [
    ...kit.hidden,
    arrayIterator,
    Object.getPrototypeOf(arrayIterator),
    Object.getPrototypeOf(new Map()[Symbol.iterator]()),
    Object.getPrototypeOf(new Set()[Symbol.iterator]()),
    Object.getPrototypeOf(""[Symbol.iterator]()),
    Object.getPrototypeOf(/x/[Symbol.matchAll]("")),
    Object.getPrototypeOf(Object.getPrototypeOf((async function* () {})())),
    Object.getPrototypeOf(Uint8Array),
  ];
  const seen = new Set<unknown>();
  const queue: unknown[] = [g, ...hidden];
  while (queue.length > 0) {
    const value = queue.pop();
    if ((typeof value !== "object" && typeof value !== "function") || value === null || seen.has(value))
      continue;
    seen.add(value);
    Object.freeze(value);
    queue.push(Object.getPrototypeOf(value));
    for (const key of Reflect.ownKeys(value)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(value, key);
      if (descriptor === undefined) continue;
      if ("value" in descriptor) queue.push(descriptor.value);
      else queue.push(descriptor.get, descriptor.set);
    }
  }
}
