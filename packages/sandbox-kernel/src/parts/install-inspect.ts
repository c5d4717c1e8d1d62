import type { KernelKit } from "../kit.js";
import { makeBases } from "./inspect/bases.js";
import { makeFormat } from "./inspect/format.js";
import { makeFormatter } from "./inspect/formatter.js";
import { captureIntrinsics } from "./inspect/intrinsics.js";
import { makeLayout } from "./inspect/layout.js";
import { makeText } from "./inspect/text.js";
import { makeValues } from "./inspect/values.js";

/**
 * Install `kit.inspect(value)` and `kit.format(args)`: Node 20's
 * `util.inspect(value)` and `util.format(...args)` with default options (depth 2,
 * no colours, `maxArrayLength` 100, `maxStringLength` 10000, `breakLength` 80,
 * `compact` 3), written in plain ECMAScript so that the same function runs in the
 * host realm and inside any guest realm (a `node:vm` context, an isolated-vm
 * isolate). It is a port of Node's `lib/internal/util/inspect.js` layout rules:
 * single-line vs multi-line objects, array grouping into columns, long-string
 * splitting, `<ref *1>`/`[Circular *1]`, holes, error stacks with own properties.
 *
 * Safety: every intrinsic is captured when this function runs, and formatting
 * never calls a method looked up on a value being formatted, never runs a guest
 * getter (accessors show as `[Getter]`, `[Setter]`, `[Getter/Setter]`), never
 * throws (a value that cannot be formatted shows as
 * `[object could not be formatted]`), and is bounded by the limits above. The
 * only guest code that can run is a Proxy's `getPrototypeOf`,
 * `getOwnPropertyDescriptor` and `ownKeys` traps (pure ECMAScript cannot tell a
 * Proxy from its target), plus any getters on the descriptor object such a trap
 * returns; no `get`, `has`, `apply` or `construct` trap runs. (Reading an
 * error's `stack` for the first time lets the engine format it, which calls the
 * realm's `Error.prepareStackTrace`; the kernel installs that one.)
 *
 * Where this differs from Node (the test's "documented differences" table pins
 * an example of each, except the width table):
 * - Proxies are formatted through the three traps above instead of as their
 *   target; a Proxy whose traps throw shows the placeholder.
 * - `[util.inspect.custom]` methods are not called; `Symbol.toStringTag` is
 *   shown only when it is a data property (or the typed-array intrinsic getter).
 * - A Promise's state cannot be read: `Promise { <unknown> }`. Map and Set
 *   iterators: `[Map Iterator] { <items unknown> }` (and `[Set Iterator]`).
 * - Errors are recognised by `Error.prototype` in their prototype chain (or by
 *   `Error.isError` where the engine has it); `name`, `message`, `stack`,
 *   `cause` and `errors` are read from data properties only.
 * - `instanceof` checks behind constructor names are done by walking the
 *   prototype chain (`Symbol.hasInstance` is not called); the name of a
 *   null-prototype object's original constructor is not known (`Object`).
 * - Async/generator functions are recognised by their prototype.
 * - Array grouping measures non-ASCII text with a small East Asian width table
 *   instead of ICU.
 * - `format`: `%s` on an object inspects it (depth 0) even when it has its own
 *   `toString` (Node calls it); `%s` on a function prints its source through the
 *   intrinsic `Function.prototype.toString`. `%d`, `%i`, `%f` convert objects
 *   without calling their methods: boxed primitives unwrap, a Date gives its
 *   time (`%d`), an array converts through its first element, anything else is
 *   `NaN`. `%j` is a JSON writer of its own that reads data properties only:
 *   accessors are treated as `undefined`, `toJSON` is honoured for Dates only,
 *   a cycle gives `[Circular]`, a BigInt the placeholder (Node throws) and
 *   nesting too deep for `JSON.stringify` is still written out (Node throws).
 *   `%o` is `%O` with depth 4 (Node also shows hidden properties).
 * - Own non-index properties of an array or typed array longer than 10000
 *   elements are not shown: pure ECMAScript can only find them by listing every
 *   index (`Reflect.ownKeys`). Shorter ones cost time proportional to length.
 *
 * The part is written as several files (`./inspect/`), each a factory over what the earlier
 * ones made: the intrinsics (captured here, at install), then values, text, bases, layout, the
 * formatter and format. The kernel's build bundles them into the profile's one script.
 */
export function installInspect(kit: KernelKit): void {
  const intrinsics = captureIntrinsics();
  // Installing a kernel happens once per fresh context, on the execution's path; most runs never
  // format a value. The intrinsics are captured at install, before guest code runs; the helpers
  // and tables the factories make use only those captures, so building them later changes nothing.
  let built: ReturnType<typeof makeFormat> | undefined;
  const build = (): ReturnType<typeof makeFormat> => {
    const I = intrinsics();
    const V = makeValues(I);
    const T = makeText(I, V);
    const L = makeLayout(I, V, T);
    const F = makeFormatter(I, V, T, makeBases(I, V), L);
    return makeFormat(I, V, T, F);
  };
  kit.inspect = (value: unknown): string => {
    built ??= build();
    return built.inspect(value);
  };
  kit.format = (args: readonly unknown[], depth?: number, maxChars?: number): string => {
    built ??= build();
    return built.format(args, depth, maxChars);
  };
}
