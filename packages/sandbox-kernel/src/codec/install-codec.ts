import type { KernelKit, NotTransferableRecord } from "../kit.js";
import { makeBase64 } from "./base64.js";
import { makeDecode } from "./decode.js";
import { makeEncode } from "./encode.js";
import { captureIntrinsics } from "./intrinsics.js";
import { makeKinds } from "./kinds.js";
import { makePaths } from "./paths.js";

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
 * arity, bad references or base64, nesting deeper than 1000 levels), whose own `reason` property
 * says which (`nested deeper than 1000 levels`, `bad base64`, …); it runs no code of the value's
 * author.
 *
 * The codec is written as several files (`./`), each a factory over what the earlier ones made:
 * the intrinsics (captured at install), then kinds, base64, paths, encode and decode. The
 * kernel's build bundles them into the profile's one script.
 */
export function installCodec(kit: KernelKit): void {
  type Codec = Pick<KernelKit, "encode" | "decode" | "isNotTransferable">;
  const intrinsics = captureIntrinsics();
  const jsonStringify = JSON.stringify as (value: unknown) => string;
  const numberIsFinite = Number.isFinite;

  /** Everything the codec does, made from the captured intrinsics on first use. */
  const build = (): Codec => {
    const I = intrinsics();
    const K = makeKinds(I);
    const B = makeBase64(I, K);
    const P = makePaths(I, K);
    const { encode, isNotTransferable } = makeEncode(I, K, B, P, kit.withoutStacks === true);
    const { decode } = makeDecode(I, K, B);
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
