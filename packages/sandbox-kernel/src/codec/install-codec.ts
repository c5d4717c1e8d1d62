import type { KernelKit, NotTransferableRecord } from "../kit.js";

/**
 * Install the value codec on `kit`: `kit.encode`, `kit.decode` and `kit.isNotTransferable`.
 *
 * REALM-NEUTRAL. This function runs inside each guest realm (bundled into the kernel), and the host
 * runs the very same function in its own realm ({@link createHostCodec}), so it uses only `kit`
 * and the ECMAScript built-ins of the realm it runs in. Every intrinsic is captured when it is
 * installed; afterwards nothing is looked up on a value being encoded (no `value.forEach`, no
 * `instanceof`, no `toJSON`): kinds are told by calling captured brand getters, and a guest that
 * replaces prototype methods after install cannot change what crosses.
 *
 * ## Format
 *
 * JSON text. Finite numbers other than `-0`, strings, booleans and `null` are themselves; every
 * other value is a JSON array whose first element is a one-letter tag:
 *
 * | node | value |
 * | --- | --- |
 * | `["u"]` | `undefined` |
 * | `["n", "NaN" \| "Infinity" \| "-Infinity" \| "-0"]` | the special numbers |
 * | `["b", "-123"]` | BigInt, decimal text |
 * | `["D", ms]` | Date; `ms` is `"NaN"` for an invalid date |
 * | `["R", source, flags]` | RegExp (`lastIndex` is not kept) |
 * | `["a", [item, …]]` | Array; a hole is `["h"]`, so the length (trailing holes too) is kept; own non-index properties are dropped |
 * | `["o", [[key, value], …]]` | any other object: own enumerable string keys in order, the getter of an accessor run once; symbol keys and the prototype dropped (class instances become plain objects) |
 * | `["M", [[key, value], …]]` | Map |
 * | `["S", [item, …]]` | Set |
 * | `["E", name, message, stack, [[key, value], …]]` | Error: the own enumerable string keys other than `stack` and `message`, then `cause` and `errors` when they are own non-enumerable properties (as `new Error(m, { cause })` and `AggregateError` make them) |
 * | `["T", kind, base64]` | typed array (`kind` is `Int8Array` … `BigUint64Array`, or `Float16Array` where the realm has it); the viewed bytes only, so the copy has byteOffset 0 |
 * | `["V", base64]` | DataView (the viewed bytes only) |
 * | `["B", base64]` | ArrayBuffer |
 * | `["r", n]` | the n-th object node already emitted (0-based, counted in pre-order of first emission): shared references and cycles |
 *
 * Object nodes are every node above but `u`, `n`, `b` and `r`. Decoding rebuilds each with the
 * decoding realm's constructors: an Error becomes the realm's `Error`, `TypeError`, `RangeError`,
 * `SyntaxError`, `ReferenceError`, `EvalError`, `URIError` or `AggregateError` picked by `name`
 * (`Error` for any other name, which is then kept as an own `name`), with `stack` as an own
 * property holding the given text; `cause` (and `errors` of an AggregateError) are defined
 * non-enumerable, every other key enumerable. Every key becomes an own data property (a key
 * that exists on `Object.prototype`, such as `__proto__`, is defined with `defineProperty`), so
 * no inherited setter runs and nothing is polluted.
 *
 * ## Refusals
 *
 * Functions (proxies of functions too), symbols, WeakMap, WeakSet, WeakRef, FinalizationRegistry,
 * Promise, SharedArrayBuffer and views on one, boxed primitives (`new Number(1)`, …) and revoked
 * proxies cannot cross. An object is told apart by its brand when its prototype chain names a
 * built-in kind; an object whose prototype chain was rewritten to hide its kind (for example
 * `Object.setPrototypeOf(new WeakMap(), null)`) is encoded as a plain object of its own
 * enumerable properties. `encode` then throws a frozen {@link NotTransferableRecord} made with the
 * realm's `Object`:
 *
 * - `path` starts with `root` and names each step as JavaScript would read it: `.name` for an
 *   identifier key, `["a b"]` for any other key, `[3]` for an array index, `.get(key)` for the
 *   value under a Map key that is a primitive (rendered as a literal of at most 40 characters:
 *   `.get("k")`, `.get(1)`, `.get(2n)`), `.values()[i]` for the value of the i-th Map entry
 *   whose key is an object (or longer), `.keys()[i]` for the i-th Map key, `.values()[i]` for
 *   the i-th Set member. Example: `result.items[3].fn`, `args[0].get("k").values()[1]`.
 * - `what` is `function`, `symbol`, `WeakMap`, `WeakSet`, `WeakRef`, `FinalizationRegistry`,
 *   `Promise`, `SharedArrayBuffer`, `Number object` (likewise `String`, `Boolean`, `BigInt`,
 *   `Symbol`), `revoked Proxy`, `array with an invalid length` (a Proxy lying about its length),
 *   `nested deeper than 1000 levels` (an array, object, Map, Set or Error inside 1000 others), or
 *   `larger than ${maxBytes} bytes` as soon as the text written so far (UTF-16 code units × 2)
 *   exceeds `maxBytes`; a string (or key, bytes, BigInt) that cannot fit is refused before its
 *   text is built. A string referenced many times is written, and counted, many times.
 *
 * A throw from a getter or a Proxy trap propagates unchanged (it is the guest's own error).
 *
 * `decode` throws a TypeError for text that is not codec text (bad JSON, unknown tags, wrong
 * arity, bad references or base64, nesting deeper than 1000 levels); it runs no code of the
 * value's author.
 */
export function installCodec(kit: KernelKit): void {
  type Uncurried = (self: unknown, ...args: unknown[]) => unknown;
  type Codec = Pick<KernelKit, "encode" | "decode" | "isNotTransferable">;
  interface Descriptor {
    value?: unknown;
    get?: () => unknown;
    enumerable?: boolean;
    writable?: boolean;
    configurable?: boolean;
  }

  // ---- intrinsics, captured before any guest code runs -------------------------------------
  // Raw references only: reading them is all that must happen before guest code. Binding them and
  // building the tables waits for the first `encode`/`decode` of something other than a primitive
  // (`build` below), which uses nothing but these captured values, so it is as safe run late as
  // run here — and an execution that returns a number never pays for it.
  const ObjectPrototype = Object.prototype;
  const freeze = Object.freeze;
  const objectKeys = Object.keys;
  const hasOwn = Object.hasOwn;
  const setPrototypeOf = Object.setPrototypeOf;
  const createObject = Object.create;
  const defineProperty = Object.defineProperty;
  const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor as (
    o: unknown,
    k: PropertyKey,
  ) => Descriptor;
  const getPrototypeOf = Reflect.getPrototypeOf as (o: unknown) => object | null;
  const apply = Reflect.apply;
  const deleteProperty = Reflect.deleteProperty;
  const isArray = Array.isArray;
  const isView = ArrayBuffer.isView;
  const numberIsFinite = Number.isFinite;
  const numberIsNaN = Number.isNaN;
  const isInteger = Number.isInteger;
  const mathCeil = Math.ceil;
  const mathMin = Math.min;
  const jsonStringify = JSON.stringify as (value: unknown) => string;
  const jsonParse = JSON.parse;
  const BigIntCtor = BigInt;
  const StringCtor = String;
  const asUintN = BigInt.asUintN;
  const fromCharCode = String.fromCharCode;
  const TypeErrorCtor = TypeError;
  const MapCtor = Map;
  const SetCtor = Set;
  const DateCtor = Date;
  const RegExpCtor = RegExp;
  const ArrayBufferCtor = ArrayBuffer;
  const Uint8ArrayCtor = Uint8Array;
  const Int16ArrayCtor = Int16Array;
  const Uint16ArrayCtor = Uint16Array;
  const DataViewCtor = DataView;
  const WeakSetCtor = WeakSet;
  const SharedArrayBufferCtor = typeof SharedArrayBuffer === "function" ? SharedArrayBuffer : undefined;
  const WeakRefCtor = typeof WeakRef === "function" ? WeakRef : undefined;
  const RegistryCtor = typeof FinalizationRegistry === "function" ? FinalizationRegistry : undefined;
  const AggregateErrorCtor = typeof AggregateError === "function" ? AggregateError : undefined;
  const iteratorSymbol = Symbol.iterator;
  const toStringTagSymbol = Symbol.toStringTag;
  const functionBind = Function.prototype.bind;
  const functionCall = Function.prototype.call;
  const getterOf = (proto: object, key: PropertyKey): unknown => getOwnPropertyDescriptor(proto, key)?.get;
  const RegExpPrototype = RegExp.prototype;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as object;
  /** The methods and getters the codec calls, by name; each is bound on first use of the codec. */
  // A dictionary-mode object: in a fresh context, every named property of an ordinary object
  // costs a new hidden-class transition (about a microsecond each); a null-prototype object made
  // by `Object.create(null)` takes them as hash entries.
  const raw = createObject(null) as Record<string, unknown>;
  raw.arrayJoin = Array.prototype.join;
  raw.typedSubarray = Uint16Array.prototype.subarray;
  raw.charCodeAt = String.prototype.charCodeAt;
  raw.objectToString = ObjectPrototype.toString;
  raw.mapGet = Map.prototype.get;
  raw.mapSet = Map.prototype.set;
  raw.mapEntries = Map.prototype.entries;
  raw.mapIteratorNext = (getPrototypeOf(new MapCtor().entries()) as { next: unknown }).next;
  raw.mapSize = getterOf(Map.prototype, "size");
  raw.setAdd = Set.prototype.add;
  raw.setValues = Set.prototype.values;
  raw.setIteratorNext = (getPrototypeOf(new SetCtor().values()) as { next: unknown }).next;
  raw.setSize = getterOf(Set.prototype, "size");
  raw.weakSetAdd = WeakSet.prototype.add;
  raw.weakSetHas = WeakSet.prototype.has;
  raw.weakMapHas = WeakMap.prototype.has;
  raw.weakRefDeref = WeakRefCtor === undefined ? undefined : WeakRefCtor.prototype.deref;
  raw.registryUnregister = RegistryCtor === undefined ? undefined : RegistryCtor.prototype.unregister;
  raw.dateGetTime = Date.prototype.getTime;
  raw.regExpExec = RegExpPrototype.exec;
  raw.regExpSource = getterOf(RegExpPrototype, "source");
  raw.hasIndices = getterOf(RegExpPrototype, "hasIndices");
  raw.global = getterOf(RegExpPrototype, "global");
  raw.ignoreCase = getterOf(RegExpPrototype, "ignoreCase");
  raw.multiline = getterOf(RegExpPrototype, "multiline");
  raw.dotAll = getterOf(RegExpPrototype, "dotAll");
  raw.unicode = getterOf(RegExpPrototype, "unicode");
  raw.unicodeSets = getterOf(RegExpPrototype, "unicodeSets");
  raw.sticky = getterOf(RegExpPrototype, "sticky");
  raw.arrayBufferByteLength = getterOf(ArrayBuffer.prototype, "byteLength");
  raw.sharedArrayBufferByteLength =
    SharedArrayBufferCtor === undefined ? undefined : getterOf(SharedArrayBufferCtor.prototype, "byteLength");
  raw.typedArrayTag = getterOf(TypedArrayPrototype, toStringTagSymbol);
  raw.typedArrayBuffer = getterOf(TypedArrayPrototype, "buffer");
  raw.typedArrayByteOffset = getterOf(TypedArrayPrototype, "byteOffset");
  raw.typedArrayByteLength = getterOf(TypedArrayPrototype, "byteLength");
  raw.dataViewBuffer = getterOf(DataView.prototype, "buffer");
  raw.dataViewByteOffset = getterOf(DataView.prototype, "byteOffset");
  raw.dataViewByteLength = getterOf(DataView.prototype, "byteLength");
  raw.numberValueOf = Number.prototype.valueOf;
  raw.stringValueOf = String.prototype.valueOf;
  raw.booleanValueOf = Boolean.prototype.valueOf;
  raw.bigIntValueOf = BigInt.prototype.valueOf;
  raw.symbolValueOf = Symbol.prototype.valueOf;
  // Named directly, not read as `globalThis[name]`: a keyed read of a vm context's global costs
  // a call into node per name, and this runs for every fresh context.
  const typedCtors = [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    (globalThis as { Float16Array?: unknown }).Float16Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  ] as unknown as ((new (buffer: ArrayBuffer) => ArrayBufferView) & { BYTES_PER_ELEMENT: number })[];
  const errorCtors = [
    Error,
    TypeError,
    RangeError,
    SyntaxError,
    ReferenceError,
    EvalError,
    URIError,
    AggregateErrorCtor,
  ] as unknown as ((new (...args: unknown[]) => Error) | undefined)[];
  /** Prototype kinds: a constructor whose prototype names a data kind (a number) or a refusal (a string). */
  const kindCtors = [
    Map,
    Set,
    Date,
    RegExp,
    ArrayBuffer,
    Error,
    Promise,
    WeakMap,
    WeakSet,
    WeakRefCtor,
    RegistryCtor,
    SharedArrayBufferCtor,
    Number,
    String,
    Boolean,
    BigInt,
    Symbol,
  ] as unknown[];

  /** Everything the codec does, made from the captured intrinsics on first use. */
  const build = (): Codec => {
    const bindCall = (fn: unknown): Uncurried => apply(functionBind, functionCall, [fn]) as Uncurried;
    const bindIf = (fn: unknown): Uncurried | undefined =>
      typeof fn === "function" ? bindCall(fn) : undefined;
    /** `true` when `fn` accepts `value` as its receiver: a brand check that never looks at `value`'s properties. */
    const brand = (fn: Uncurried | undefined, value: unknown, arg?: unknown): boolean => {
      if (fn === undefined) return false;
      try {
        fn(value, arg);
        return true;
      } catch {
        return false;
      }
    };
    /** A fresh array with no prototype: writing to it can never reach an inherited setter. */
    const list = <T>(): T[] => setPrototypeOf([], null) as T[];
    /**
     * A table made on its first use, from captured values only. Most tables serve one kind of
     * value (RegExp flags, typed arrays, base64, Errors); a run that never meets that kind does not
     * pay for it — in a fresh context, building them all took about 80 µs of the codec's first use.
     */
    const once = <T>(make: () => T): (() => T) => {
      let made: T | undefined;
      return () => {
        if (made === undefined) made = make();
        return made;
      };
    };

    const arrayJoin = bindCall(raw.arrayJoin);
    const typedSubarray = bindCall(raw.typedSubarray);
    const charCodeAt = bindCall(raw.charCodeAt) as (s: string, i: number) => number;
    const objectToString = bindCall(raw.objectToString) as (o: unknown) => string;
    const mapGet = bindCall(raw.mapGet);
    const mapSet = bindCall(raw.mapSet);
    const mapEntries = bindCall(raw.mapEntries);
    const mapIteratorNext = bindCall(raw.mapIteratorNext) as (
      it: unknown,
    ) => IteratorResult<[unknown, unknown]>;
    const mapSize = bindIf(raw.mapSize);
    const setAdd = bindCall(raw.setAdd);
    const setValues = bindCall(raw.setValues);
    const setIteratorNext = bindCall(raw.setIteratorNext) as (it: unknown) => IteratorResult<unknown>;
    const setSize = bindIf(raw.setSize);
    const weakSetAdd = bindCall(raw.weakSetAdd);
    const weakSetHas = bindCall(raw.weakSetHas);
    const dateGetTime = bindCall(raw.dateGetTime) as (d: unknown) => number;
    const regExpExec = bindCall(raw.regExpExec);
    /** What JSON escapes in a string: `"`, `\\`, control characters, lone surrogates (with `u`, a pair is one code point). */
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
    const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/u;
    const regExpSource = bindIf(raw.regExpSource);
    const regExpFlags = once(() => {
      const flags = list<[string, Uncurried]>();
      const flagLetters = "dgimsuvy";
      const flagGetters = [
        raw.hasIndices,
        raw.global,
        raw.ignoreCase,
        raw.multiline,
        raw.dotAll,
        raw.unicode,
        raw.unicodeSets,
        raw.sticky,
      ];
      for (let i = 0; i < flagGetters.length; i++) {
        const get = bindIf(flagGetters[i]);
        if (get !== undefined) flags[flags.length] = [flagLetters[i] as string, get];
      }
      return flags;
    });
    const arrayBufferByteLength = bindIf(raw.arrayBufferByteLength);
    const sharedArrayBufferByteLength = bindIf(raw.sharedArrayBufferByteLength);
    const typedArrayTag = bindIf(raw.typedArrayTag) as Uncurried;
    const typedArrayBuffer = bindIf(raw.typedArrayBuffer) as Uncurried;
    const typedArrayByteOffset = bindIf(raw.typedArrayByteOffset) as Uncurried;
    const typedArrayByteLength = bindIf(raw.typedArrayByteLength) as Uncurried;
    const dataViewBuffer = bindIf(raw.dataViewBuffer) as Uncurried;
    const dataViewByteOffset = bindIf(raw.dataViewByteOffset) as Uncurried;
    const dataViewByteLength = bindIf(raw.dataViewByteLength) as Uncurried;

    type TypedArrayCtor = new (buffer: ArrayBuffer) => ArrayBufferView;
    const typedArrays = once(() => {
      const table = setPrototypeOf({}, null) as Record<string, [TypedArrayCtor, number] | undefined>;
      const typedNames = [
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
      for (let i = 0; i < typedNames.length; i++) {
        const Ctor = typedCtors[i];
        // BYTES_PER_ELEMENT of a built-in constructor is neither writable nor configurable.
        if (typeof Ctor === "function") table[typedNames[i] as string] = [Ctor, Ctor.BYTES_PER_ELEMENT];
      }
      return table;
    });

    type ErrorCtor = new (...args: unknown[]) => Error;
    const ErrorCtor = errorCtors[0] as ErrorCtor;
    const errors = once(() => {
      const table = setPrototypeOf({}, null) as Record<string, ErrorCtor | undefined>;
      const errorNames = [
        "Error",
        "TypeError",
        "RangeError",
        "SyntaxError",
        "ReferenceError",
        "EvalError",
        "URIError",
        "AggregateError",
      ];
      for (let i = 0; i < errorNames.length; i++) {
        const Ctor = errorCtors[i];
        if (Ctor !== undefined) table[errorNames[i] as string] = Ctor;
      }
      return table;
    });
    /** An iterable with nothing in it that reads only its own properties (for `new AggregateError`). */
    const emptyIterable = once(() => {
      const doneResult = freeze(setPrototypeOf({ done: true, value: undefined }, null));
      const emptyIterator = freeze(setPrototypeOf({ next: () => doneResult }, null));
      const iterable = setPrototypeOf({}, null) as Record<symbol, () => unknown> & Iterable<unknown>;
      iterable[iteratorSymbol] = () => emptyIterator;
      return freeze(iterable as unknown as Iterable<unknown>);
    });

    // Kinds named by a prototype: a number is a data kind (checked by brand), a string a refusal.
    const PLAIN = 0;
    const MAP = 1;
    const SET = 2;
    const DATE = 3;
    const REGEXP = 4;
    const BUFFER = 5;
    const ERROR = 6;
    const FULL_CHECK = 7;
    const ARRAY = 8;
    const VIEW = 9;
    const kinds: (number | string)[] = [
      MAP,
      SET,
      DATE,
      REGEXP,
      BUFFER,
      ERROR,
      "Promise",
      "WeakMap",
      "WeakSet",
      "WeakRef",
      "FinalizationRegistry",
      "SharedArrayBuffer",
      "Number object",
      "String object",
      "Boolean object",
      "BigInt object",
      "Symbol object",
    ];
    const protoKinds = new MapCtor<unknown, number | string>();
    for (let i = 0; i < kindCtors.length; i++) {
      const Ctor = kindCtors[i];
      // A built-in constructor's `prototype` is neither writable nor configurable: safe to read late.
      if (typeof Ctor === "function")
        mapSet(protoKinds, (Ctor as { prototype: unknown }).prototype, kinds[i]);
    }
    const probe = freeze(setPrototypeOf({}, null));
    const weakMapHas = bindCall(raw.weakMapHas);
    const weakRefDeref = bindIf(raw.weakRefDeref);
    const registryUnregister = bindIf(raw.registryUnregister);
    const boxes = once(
      () =>
        [
          ["Number object", bindCall(raw.numberValueOf)],
          ["String object", bindCall(raw.stringValueOf)],
          ["Boolean object", bindCall(raw.booleanValueOf)],
          ["BigInt object", bindCall(raw.bigIntValueOf)],
          ["Symbol object", bindCall(raw.symbolValueOf)],
        ] as const,
    );

    const MAX_DEPTH = 1000;
    const DEEP = "nested deeper than 1000 levels";
    const MAX_PROTO_HOPS = 100;
    const BIG_SMALL = 2n ** 256n;
    const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    /** The value of each base64 digit by its character code, -1 for any other code below 128. */
    const base64Values = once(() => {
      const values = new Int16ArrayCtor(128);
      for (let i = 0; i < 128; i++) values[i] = -1;
      for (let i = 0; i < 64; i++) values[charCodeAt(BASE64, i)] = i;
      return values;
    });
    /** The character code of each base64 digit. */
    const base64Digits = once(() => {
      const digits = new Uint16ArrayCtor(64);
      for (let i = 0; i < 64; i++) digits[i] = charCodeAt(BASE64, i);
      return digits;
    });
    /** A reusable buffer of character codes, made on first use. */
    let base64Codes: Uint16Array | undefined;
    /** Pieces of encoded text are gathered into flat chunks of about this many code units. */
    const CHUNK = 16384;
    const empty = new Uint8ArrayCtor(0);

    const REFUSED = freeze(setPrototypeOf({}, null));
    const issued = new WeakSetCtor<object>();

    // ---- helpers shared by encode calls (no per-call state) ---------------------------------

    /** The kind of an object that is neither an array nor a view (see the prototype-kind table). */
    const fullCheck = (o: object): number | string => {
      if (brand(arrayBufferByteLength, o)) return BUFFER;
      if (brand(sharedArrayBufferByteLength, o)) return "SharedArrayBuffer";
      if (brand(dateGetTime, o)) return DATE;
      if (brand(regExpSource, o) && o !== RegExpPrototype) return REGEXP;
      if (brand(mapSize, o)) return MAP;
      if (brand(setSize, o)) return SET;
      if (brand(weakMapHas, o, probe)) return "WeakMap";
      if (brand(weakSetHas, o, probe)) return "WeakSet";
      if (brand(weakRefDeref, o)) return "WeakRef";
      if (brand(registryUnregister, o, probe)) return "FinalizationRegistry";
      const boxKinds = boxes();
      for (let i = 0; i < boxKinds.length; i++) {
        const box = boxKinds[i] as readonly [string, Uncurried];
        if (brand(box[1], o)) return box[0];
      }
      const tag = objectToString(o);
      if (tag === "[object Promise]") return "Promise";
      if (tag === "[object Error]") return ERROR;
      return PLAIN;
    };

    /** Classify `o` by its prototype chain, confirming data kinds by brand. */
    const classify = (o: object): number | string => {
      let proto = getPrototypeOf(o);
      if (proto === null) return PLAIN;
      let kind: number | string | undefined;
      for (let hops = 0; ; hops++) {
        if (proto === ObjectPrototype) return PLAIN;
        kind = mapGet(protoKinds, proto) as number | string | undefined;
        if (kind !== undefined) break;
        proto = getPrototypeOf(proto);
        if (proto === null || hops === MAX_PROTO_HOPS) {
          kind = FULL_CHECK;
          break;
        }
      }
      switch (kind) {
        case MAP:
          return brand(mapSize, o) ? MAP : fullCheck(o);
        case SET:
          return brand(setSize, o) ? SET : fullCheck(o);
        case DATE:
          return brand(dateGetTime, o) ? DATE : fullCheck(o);
        case REGEXP:
          return brand(regExpSource, o) ? REGEXP : fullCheck(o);
        case BUFFER:
          return brand(arrayBufferByteLength, o) ? BUFFER : fullCheck(o);
        case FULL_CHECK:
          return fullCheck(o);
        default:
          return kind;
      }
    };

    /** `s` as a JSON string literal; text with nothing to escape skips `JSON.stringify`. */
    const quote = (s: string): string => (regExpExec(NEEDS_ESCAPE, s) === null ? `"${s}"` : jsonStringify(s));

    /** A non-string name or message as text, without running any code of the value's author. */
    const text = (v: unknown): string =>
      v === undefined || (typeof v === "object" && v !== null) || typeof v === "function"
        ? ""
        : StringCtor(v);

    const isIdentifier = (key: string): boolean => {
      if (key.length === 0) return false;
      for (let i = 0; i < key.length; i++) {
        const c = charCodeAt(key, i);
        const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 36 || c === 95;
        if (!letter && (i === 0 || c < 48 || c > 57)) return false;
      }
      return true;
    };
    const propertySegment = (key: string): string =>
      isIdentifier(key) ? `.${key}` : `[${jsonStringify(key)}]`;
    const mapValueSegment = (key: unknown, index: number): string => {
      let literal: string | undefined;
      switch (typeof key) {
        case "string":
          literal = jsonStringify(key);
          break;
        case "number":
          literal = key === 0 && 1 / key < 0 ? "-0" : `${key}`;
          break;
        case "bigint":
          literal = `${key}n`;
          break;
        case "boolean":
        case "undefined":
          literal = `${key}`;
          break;
        default:
          if (key === null) literal = "null";
      }
      return literal !== undefined && literal.length <= 40 ? `.get(${literal})` : `.values()[${index}]`;
    };

    /** Base64 of the first `n` bytes, written 6 KiB at a time into a small code buffer (flat, no rope). */
    const toBase64 = (bytes: Uint8Array, n: number): string => {
      const digits = base64Digits();
      let codes = base64Codes;
      if (codes === undefined) {
        codes = new Uint16ArrayCtor(8192);
        base64Codes = codes;
      }
      const parts = list<string>();
      let i = 0;
      while (i < n) {
        const end = mathMin(n, i + 6144);
        let c = 0;
        for (; i + 2 < end; i += 3) {
          const x = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
          codes[c++] = digits[x >>> 18] as number;
          codes[c++] = digits[(x >>> 12) & 63] as number;
          codes[c++] = digits[(x >>> 6) & 63] as number;
          codes[c++] = digits[x & 63] as number;
        }
        if (end === n && n - i === 1) {
          const x = (bytes[i] as number) << 16;
          codes[c++] = digits[x >>> 18] as number;
          codes[c++] = digits[(x >>> 12) & 63] as number;
          codes[c++] = 61;
          codes[c++] = 61;
          i = n;
        } else if (end === n && n - i === 2) {
          const x = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
          codes[c++] = digits[x >>> 18] as number;
          codes[c++] = digits[(x >>> 12) & 63] as number;
          codes[c++] = digits[(x >>> 6) & 63] as number;
          codes[c++] = 61;
          i = n;
        }
        parts[parts.length] = apply(
          fromCharCode,
          undefined,
          typedSubarray(codes, 0, c) as Uint16Array,
        ) as string;
      }
      return parts.length === 1 ? (parts[0] as string) : (arrayJoin(parts, "") as string);
    };

    // ---- encode -----------------------------------------------------------------------------

    const encode = (value: unknown, root: string, maxBytes: number): string => {
      if (typeof maxBytes !== "number" || numberIsNaN(maxBytes) || maxBytes < 0)
        throw new TypeErrorCtor("encode: maxBytes must be a number of bytes, 0 or more");
      /** The most UTF-16 code units the text may hold. */
      const limit = maxBytes / 2;
      const seen = new MapCtor<object, number>();
      // The text is written in flat chunks: appending small pieces to one string would build a rope
      // of millions of nodes (many times the text's size); each chunk is flattened once and kept.
      let out = "";
      let written = 0;
      const chunks = list<string>();
      let count = 0;
      let what = "";
      /** Path segments, innermost first; filled only while a refusal unwinds. */
      const segments = list<string>();

      const put = (piece: string): void => {
        out += piece;
        if (out.length > CHUNK) {
          charCodeAt(out, 0); // flattens the rope in place
          chunks[chunks.length] = out;
          written += out.length;
          out = "";
        }
      };

      const refuse = (reason: string): never => {
        what = reason;
        throw REFUSED;
      };
      const refuseSize = (): never => refuse(`larger than ${maxBytes} bytes`);
      /** Run on the way out of a refused child: remember the step that led to it. */
      const step = (error: unknown, segment: string): void => {
        if (error === REFUSED) segments[segments.length] = segment;
      };
      const remember = (o: object): void => {
        mapSet(seen, o, count);
        count++;
      };

      const string = (s: string): void => {
        if (written + out.length + s.length + 2 > limit) refuseSize();
        put(quote(s));
      };

      const bigint = (b: bigint): void => {
        const magnitude = b < 0n ? -b : b;
        if (magnitude > BIG_SMALL) {
          // Refuse before writing digits that cannot fit: b >= 2^bits implies more digits than room.
          const room = limit - (written + out.length);
          if (room < 0) refuseSize();
          if (room < 4e8) {
            const bits = mathCeil((room + 2) / 0.30102999) + 2;
            if (asUintN(bits, magnitude) !== magnitude) refuseSize();
          }
        }
        put(`["b","${b}"]`);
      };

      const bytes = (tag: string, buffer: unknown, offset: number, length: number): void => {
        if (written + out.length + tag.length + mathCeil(length / 3) * 4 + 4 > limit) refuseSize();
        const view = length === 0 ? empty : new Uint8ArrayCtor(buffer as ArrayBuffer, offset, length);
        put(`${tag}"${toBase64(view, length)}"]`);
      };

      const view = (o: object): void => {
        const kind = typedArrayTag(o) as string | undefined;
        const buffer = kind === undefined ? dataViewBuffer(o) : typedArrayBuffer(o);
        if (!brand(arrayBufferByteLength, buffer)) refuse("SharedArrayBuffer");
        remember(o);
        if (kind === undefined) {
          bytes('["V",', buffer, dataViewByteOffset(o) as number, dataViewByteLength(o) as number);
        } else {
          bytes(
            `["T","${kind}",`,
            buffer,
            typedArrayByteOffset(o) as number,
            typedArrayByteLength(o) as number,
          );
        }
      };

      const array = (o: unknown[], depth: number): void => {
        const length = o.length;
        if (typeof length !== "number" || !(length >= 0 && length <= 4294967295) || !isInteger(length))
          refuse("array with an invalid length");
        remember(o);
        put('["a",[');
        for (let i = 0; i < length; i++) {
          if (i > 0) put(",");
          try {
            if (hasOwn(o, i)) {
              node(o[i], depth + 1);
            } else {
              put('["h"]');
              if (written + out.length > limit) refuseSize();
            }
          } catch (error) {
            step(error, `[${i}]`);
            throw error;
          }
        }
        put("]]");
      };

      /**
       * Write `,[key, value]` (no comma for the first) for each own enumerable string key of `o`,
       * running an accessor's getter once; for an Error, `stack` and `message` are skipped and
       * non-enumerable own `cause` and `errors` added. Returns whether nothing was written.
       */
      const properties = (o: object, depth: number, ofError: boolean): boolean => {
        const keys = objectKeys(o);
        const keyCount = keys.length;
        let first = true;
        for (let i = 0; i < keyCount + (ofError ? 2 : 0); i++) {
          const key = i < keyCount ? (keys[i] as string) : i === keyCount ? "cause" : "errors";
          if (ofError && i < keyCount && (key === "stack" || key === "message")) continue;
          try {
            const descriptor = getOwnPropertyDescriptor(o, key);
            if (descriptor === undefined || descriptor.enumerable !== i < keyCount) continue;
            const entry = hasOwn(descriptor, "value")
              ? descriptor.value
              : descriptor.get === undefined
                ? undefined
                : apply(descriptor.get, o, []);
            if (written + out.length + key.length + 4 > limit) refuseSize();
            put(`${first ? "[" : ",["}${quote(key)},`);
            first = false;
            node(entry, depth + 1);
            put("]");
          } catch (caught) {
            step(caught, propertySegment(key));
            throw caught;
          }
        }
        return first;
      };

      const error = (o: object, depth: number): void => {
        remember(o);
        const fields = o as { name?: unknown; message?: unknown; stack?: unknown };
        const name = fields.name;
        const message = fields.message;
        // The host's own stacks carry host paths and frames: they never cross into a guest.
        const stack = kit.withoutStacks === true ? "" : fields.stack;
        put('["E",');
        string(typeof name === "string" ? name : text(name));
        put(",");
        string(typeof message === "string" ? message : text(message));
        put(",");
        string(typeof stack === "string" ? stack : "");
        put(",[");
        properties(o, depth, true);
        put("]]");
      };

      const map = (o: object, depth: number): void => {
        remember(o);
        put('["M",[');
        const iterator = mapEntries(o);
        for (let i = 0; ; i++) {
          const result = mapIteratorNext(iterator);
          if (result.done === true) break;
          const key = result.value[0];
          put(i === 0 ? "[" : ",[");
          try {
            node(key, depth + 1);
          } catch (caught) {
            step(caught, `.keys()[${i}]`);
            throw caught;
          }
          put(",");
          try {
            node(result.value[1], depth + 1);
          } catch (caught) {
            step(caught, mapValueSegment(key, i));
            throw caught;
          }
          put("]");
        }
        put("]]");
      };

      const set = (o: object, depth: number): void => {
        remember(o);
        put('["S",[');
        const iterator = setValues(o);
        for (let i = 0; ; i++) {
          const result = setIteratorNext(iterator);
          if (result.done === true) break;
          if (i > 0) put(",");
          try {
            node(result.value, depth + 1);
          } catch (caught) {
            step(caught, `.values()[${i}]`);
            throw caught;
          }
        }
        put("]]");
      };

      const regExp = (o: object): void => {
        remember(o);
        let flags = "";
        const getters = regExpFlags();
        for (let i = 0; i < getters.length; i++) {
          const flag = getters[i] as [string, Uncurried];
          if (flag[1](o) === true) flags += flag[0];
        }
        put('["R",');
        string(regExpSource?.(o) as string);
        put(`,"${flags}"]`);
      };

      /** Write `v`, which sits inside `depth` arrays, objects, Maps, Sets and Errors. */
      const node = (v: unknown, depth: number): void => {
        switch (typeof v) {
          case "string":
            string(v);
            break;
          case "number":
            if (!numberIsFinite(v))
              put(numberIsNaN(v) ? '["n","NaN"]' : v > 0 ? '["n","Infinity"]' : '["n","-Infinity"]');
            else if (v === 0 && 1 / v < 0) put('["n","-0"]');
            else put(`${v}`);
            break;
          case "boolean":
            put(v ? "true" : "false");
            break;
          case "undefined":
            put('["u"]');
            break;
          case "bigint":
            bigint(v);
            break;
          case "symbol":
            refuse("symbol");
            break;
          case "function":
            refuse("function");
            break;
          default: {
            if (v === null) {
              put("null");
              break;
            }
            const o = v as object;
            const ref = mapGet(seen, o) as number | undefined;
            if (ref !== undefined) {
              put(`["r",${ref}]`);
              break;
            }
            let isList = false;
            try {
              isList = isArray(o);
            } catch {
              refuse("revoked Proxy");
            }
            const kind = isList ? ARRAY : isView(o) ? VIEW : classify(o);
            if (
              (kind === ARRAY || kind === PLAIN || kind === MAP || kind === SET || kind === ERROR) &&
              depth >= MAX_DEPTH
            )
              refuse(DEEP);
            switch (kind) {
              case ARRAY:
                array(o as unknown[], depth);
                break;
              case VIEW:
                view(o);
                break;
              case PLAIN:
                remember(o);
                put('["o",[');
                properties(o, depth, false);
                put("]]");
                break;
              case MAP:
                map(o, depth);
                break;
              case SET:
                set(o, depth);
                break;
              case ERROR:
                error(o, depth);
                break;
              case DATE: {
                remember(o);
                const time = dateGetTime(o);
                put(numberIsNaN(time) ? '["D","NaN"]' : `["D",${time}]`);
                break;
              }
              case REGEXP:
                regExp(o);
                break;
              case BUFFER:
                remember(o);
                bytes('["B",', o, 0, arrayBufferByteLength?.(o) as number);
                break;
              default:
                refuse(kind as string);
            }
          }
        }
        if (written + out.length > limit) refuseSize();
      };

      try {
        node(value, 0);
      } catch (caught) {
        if (caught !== REFUSED) throw caught;
        let path = typeof root === "string" ? root : "value";
        for (let i = segments.length - 1; i >= 0; i--) path += segments[i] as string;
        const record: NotTransferableRecord = freeze({ kind: "not-transferable", path, what });
        weakSetAdd(issued, record);
        throw record;
      }
      if (chunks.length === 0) return out;
      chunks[chunks.length] = out;
      return arrayJoin(chunks, "") as string;
    };

    const isNotTransferable = (value: unknown): value is NotTransferableRecord =>
      weakSetHas(issued, value) === true;

    // ---- decode -----------------------------------------------------------------------------

    /** One reusable data descriptor (decode runs no foreign code, so it is never seen half-filled). */
    const descriptor = setPrototypeOf(
      { value: undefined, writable: true, enumerable: true, configurable: true },
      null,
    ) as Descriptor;
    const define = (target: object, key: string, value: unknown, enumerable: boolean): void => {
      descriptor.value = value;
      descriptor.enumerable = enumerable;
      defineProperty(target, key, descriptor as PropertyDescriptor);
    };
    let malformedReason = "";
    const MALFORMED = freeze(setPrototypeOf({}, null));
    const bad = (reason: string): never => {
      malformedReason = reason;
      throw MALFORMED;
    };

    const fromBase64 = (text: unknown): ArrayBuffer => {
      if (typeof text !== "string" || text.length % 4 !== 0) return bad("bad base64");
      const length = text.length;
      let padding = 0;
      if (length > 0 && charCodeAt(text, length - 1) === 61)
        padding = charCodeAt(text, length - 2) === 61 ? 2 : 1;
      const size = (length / 4) * 3 - padding;
      const buffer = new ArrayBufferCtor(size);
      const bytes = new Uint8ArrayCtor(buffer);
      let p = 0;
      const values = base64Values();
      for (let i = 0; i < length; i += 4) {
        const last = i + 4 === length;
        const a = values[charCodeAt(text, i)];
        const b = values[charCodeAt(text, i + 1)];
        const c = last && padding === 2 ? 0 : values[charCodeAt(text, i + 2)];
        const d = last && padding > 0 ? 0 : values[charCodeAt(text, i + 3)];
        if (a === undefined || b === undefined || c === undefined || d === undefined || (a | b | c | d) < 0)
          return bad("bad base64");
        const x = (a << 18) | (b << 12) | (c << 6) | d;
        bytes[p++] = x >>> 16;
        if (p < size) bytes[p++] = (x >>> 8) & 255;
        if (p < size) bytes[p++] = x & 255;
      }
      return buffer;
    };

    /** How many elements a node with `tag` has (0: not a tag). */
    const arity = (tag: string): number => {
      switch (tag) {
        case "u":
          return 1;
        case "n":
        case "b":
        case "r":
        case "a":
        case "o":
        case "M":
        case "S":
        case "D":
        case "V":
        case "B":
          return 2;
        case "R":
        case "T":
          return 3;
        case "E":
          return 5;
        default:
          return 0;
      }
    };

    const isDigits = (s: string): boolean => {
      const start = s.length > 0 && charCodeAt(s, 0) === 45 ? 1 : 0;
      if (s.length === start) return false;
      for (let i = start; i < s.length; i++) {
        const c = charCodeAt(s, i);
        if (c < 48 || c > 57) return false;
      }
      return true;
    };

    const decode = (text: string): unknown => {
      if (typeof text !== "string") throw new TypeErrorCtor("decode: codec text must be a string");
      let tree: unknown;
      try {
        tree = jsonParse(text);
      } catch {
        throw new TypeErrorCtor("decode: malformed codec text (not JSON)");
      }
      const refs = list<unknown>();
      const keep = <T>(value: T): T => {
        refs[refs.length] = value;
        return value;
      };
      const pairs = (entries: unknown): unknown[][] => {
        if (!isArray(entries)) return bad("entries are not a list");
        for (let i = 0; i < entries.length; i++) {
          const entry = entries[i];
          if (!isArray(entry) || entry.length !== 2) return bad("an entry is not a pair");
        }
        return entries as unknown[][];
      };
      /** A node with no children (the `a`, `o`, `M`, `S` and `E` nodes are built by {@link container}). */
      const leaf = (n: unknown[], tag: string): unknown => {
        switch (tag) {
          case "u":
            return undefined;
          case "n":
            switch (n[1]) {
              case "NaN":
                return NaN;
              case "Infinity":
                return Infinity;
              case "-Infinity":
                return -Infinity;
              case "-0":
                return -0;
              default:
                return bad("bad special number");
            }
          case "b": {
            const digits = n[1];
            if (typeof digits !== "string" || !isDigits(digits)) return bad("bad BigInt");
            return BigIntCtor(digits);
          }
          case "r": {
            const index = n[1];
            if (typeof index !== "number" || !isInteger(index) || index < 0 || index >= refs.length)
              return bad("bad reference");
            return refs[index];
          }
          case "D": {
            const time = n[1];
            if (time !== "NaN" && typeof time !== "number") return bad("bad Date");
            return keep(new DateCtor(time === "NaN" ? NaN : time));
          }
          case "R": {
            const source = n[1];
            const flags = n[2];
            if (typeof source !== "string" || typeof flags !== "string") return bad("bad RegExp");
            let re: RegExp;
            try {
              re = new RegExpCtor(source, flags);
            } catch {
              return bad("bad RegExp");
            }
            return keep(re);
          }
          case "T": {
            const kind = n[1];
            const typed = typeof kind === "string" ? typedArrays()[kind] : undefined;
            if (typed === undefined) return bad("unknown typed array kind");
            const buffer = fromBase64(n[2]);
            if ((arrayBufferByteLength?.(buffer) as number) % typed[1] !== 0)
              return bad("bad typed array length");
            return keep(new typed[0](buffer));
          }
          case "V":
            return keep(new DataViewCtor(fromBase64(n[1])));
          default:
            return keep(fromBase64(n[1]));
        }
      };

      const container = (n: unknown[], tag: string, depth: number): unknown => {
        switch (tag) {
          case "a": {
            // The parsed list becomes the array: its elements are replaced in place, holes deleted.
            const items = n[1];
            if (!isArray(items)) return bad("array items are not a list");
            keep(items);
            for (let i = 0; i < items.length; i++) {
              const item = items[i];
              if (typeof item !== "object" || item === null) continue;
              if (isArray(item) && item.length === 1 && item[0] === "h") deleteProperty(items, i);
              else items[i] = node(item, depth + 1);
            }
            return items;
          }
          case "o": {
            const entries = pairs(n[1]);
            const o = keep({}) as Record<string, unknown>;
            for (let i = 0; i < entries.length; i++) {
              const entry = entries[i] as unknown[];
              const key = entry[0];
              if (typeof key !== "string") return bad("a key is not a string");
              const value = node(entry[1], depth + 1);
              // Assignment is several times faster than defineProperty and is exact unless the key
              // is on Object.prototype (`__proto__`, or a setter or read-only property put there).
              if (hasOwn(ObjectPrototype, key)) define(o, key, value, true);
              else o[key] = value;
            }
            return o;
          }
          case "M": {
            const entries = pairs(n[1]);
            const m = keep(new MapCtor());
            for (let i = 0; i < entries.length; i++) {
              const entry = entries[i] as unknown[];
              const key = node(entry[0], depth + 1);
              mapSet(m, key, node(entry[1], depth + 1));
            }
            return m;
          }
          case "S": {
            const items = n[1];
            if (!isArray(items)) return bad("Set items are not a list");
            const s = keep(new SetCtor());
            for (let i = 0; i < items.length; i++) setAdd(s, node(items[i], depth + 1));
            return s;
          }
          default:
            return error(n, depth);
        }
      };

      const error = (n: unknown[], depth: number): Error => {
        const name = n[1];
        const message = n[2];
        const stack = n[3];
        if (typeof name !== "string" || typeof message !== "string" || typeof stack !== "string")
          return bad("bad Error fields");
        const entries = pairs(n[4]);
        const table = errors();
        const Ctor = table[name] ?? ErrorCtor;
        const aggregate = AggregateErrorCtor !== undefined && Ctor === AggregateErrorCtor;
        const e: Error = aggregate
          ? message === ""
            ? new AggregateErrorCtor(emptyIterable())
            : new AggregateErrorCtor(emptyIterable(), message)
          : message === ""
            ? new Ctor()
            : new Ctor(message);
        keep(e);
        if (table[name] === undefined) define(e, "name", name, false);
        // Deleting first keeps V8 from formatting the captured stack (running prepareStackTrace).
        deleteProperty(e, "stack");
        define(e, "stack", stack, false);
        for (let i = 0; i < entries.length; i++) {
          const entry = entries[i] as unknown[];
          const key = entry[0];
          if (typeof key !== "string") return bad("a key is not a string");
          const hidden = key === "cause" || (aggregate && key === "errors");
          define(e, key, node(entry[1], depth + 1), !hidden);
        }
        return e;
      };

      const node = (n: unknown, depth: number): unknown => {
        if (typeof n !== "object") return n;
        if (n === null) return null;
        // Length first: reading a missing index would reach Array.prototype.
        if (!isArray(n) || n.length === 0) return bad("a node is not a tagged list");
        const tag = n[0];
        if (typeof tag !== "string" || n.length !== arity(tag)) return bad("unknown tag or wrong arity");
        if (tag !== "a" && tag !== "o" && tag !== "M" && tag !== "S" && tag !== "E") return leaf(n, tag);
        if (depth >= MAX_DEPTH) return bad(DEEP);
        return container(n, tag, depth);
      };
      try {
        return node(tree, 0);
      } catch (caught) {
        const reason = caught === MALFORMED ? malformedReason : "could not be rebuilt";
        throw new TypeErrorCtor(`decode: malformed codec text (${reason})`);
      } finally {
        descriptor.value = undefined;
      }
    };
    return { encode, decode, isNotTransferable };
  };

  let codec: Codec | undefined;
  kit.encode = (value: unknown, root: string, maxBytes: number): string => {
    // A finite number, a boolean or null is its own JSON text; anything else builds the codec.
    if (maxBytes >= 64) {
      if (typeof value === "number" && numberIsFinite(value) && (value !== 0 || 1 / value > 0))
        return jsonStringify(value);
      if (typeof value === "boolean" || value === null)
        return value === null ? "null" : value ? "true" : "false";
    }
    if (codec === undefined) codec = build();
    return codec.encode(value, root, maxBytes);
  };
  kit.decode = (text: string): unknown => {
    if (codec === undefined) codec = build();
    return codec.decode(text);
  };
  // Records are issued only by a built codec.
  kit.isNotTransferable = (value: unknown): value is NotTransferableRecord =>
    codec === undefined ? false : codec.isNotTransferable(value);
}

/**
 * The codec in the host realm: the same {@link installCodec} the guest runs, installed on a fresh
 * object here, so host values are encoded and decoded with host-realm intrinsics.
 */
export function createHostCodec(
  options: { keepStacks?: boolean } = {},
): Pick<KernelKit, "encode" | "decode" | "isNotTransferable"> {
  // What the host encodes goes to a guest: Error values cross with an empty stack. `keepStacks` is for
  // host-to-host copies of guest values (a result relayed from a worker), whose stacks are guest-only already.
  const kit = { withoutStacks: options.keepStacks !== true } as KernelKit;
  installCodec(kit);
  return Object.freeze({ encode: kit.encode, decode: kit.decode, isNotTransferable: kit.isNotTransferable });
}
