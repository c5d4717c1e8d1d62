import type { KernelKit } from "../kit.js";

/** What V8 says when a context refuses code generation from strings. */
const REFUSED = "Code generation from strings disallowed for this context";

/**
 * GUEST REALM. Refuses code generation from strings on every engine, as V8 does in a context
 * made with `codeGeneration: { strings: false }` (the node:vm realms of vm, worker and spawn):
 * `eval(text)`, `Function(text)` and the async, generator and async generator function
 * constructors throw `EvalError: Code generation from strings disallowed for this context`.
 * An isolated-vm context and QuickJS cannot be told so, and guest code there would otherwise
 * compile strings where the other engines refuse.
 *
 * The stand-ins keep what code reads off the intrinsics: names, lengths, `prototype`, the
 * prototype chain and every `prototype.constructor`, so `fn instanceof Function` and
 * `(function () {}).constructor === Function` still hold. The kernel's own `eval` (settle's
 * `evaluate` entry, which runs the guest's code on isolated-vm) is captured before this part.
 */
export function installCodeGeneration(kit: KernelKit): void {
  const { defineProperty, getPrototypeOf, setPrototypeOf } = Reflect;
  const EvalErrorOf = EvalError;

  /** A constructible stand-in for `intrinsic` that refuses, with its name, length and prototype. */
  function standIn(intrinsic: () => unknown, parent: object): () => unknown {
    // A function declaration, not an arrow: `new Function(text)` must reach the throw.
    function refuse(): never {
      throw new EvalErrorOf(REFUSED);
    }
    defineProperty(refuse, "name", { value: intrinsic.name, configurable: true });
    defineProperty(refuse, "length", { value: intrinsic.length, configurable: true });
    const prototype = intrinsic.prototype as object;
    defineProperty(refuse, "prototype", { value: prototype, writable: false });
    setPrototypeOf(refuse, parent);
    defineProperty(prototype, "constructor", { value: refuse });
    return refuse;
  }

  const FunctionIntrinsic = Function as unknown as () => unknown;
  const FunctionStandIn = standIn(FunctionIntrinsic, getPrototypeOf(FunctionIntrinsic) as object);
  const kinds = [
    async () => undefined,
    function* () {
      /* generator */
    },
    async function* () {
      /* async generator */
    },
  ];
  for (const example of kinds) {
    // AsyncFunction, GeneratorFunction, AsyncGeneratorFunction: each inherits from Function.
    standIn((getPrototypeOf(example) as { constructor: () => unknown }).constructor, FunctionStandIn);
  }
  kit.defineGlobal("Function", FunctionStandIn);
  // A method: named "eval", one parameter, not a constructor — as the intrinsic.
  kit.defineGlobal(
    "eval",
    {
      eval(_source: unknown): never {
        throw new EvalErrorOf(REFUSED);
      },
    }.eval,
  );
}
