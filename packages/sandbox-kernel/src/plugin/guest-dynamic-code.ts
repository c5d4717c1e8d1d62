import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. Replaces every way to compile code from strings — global `eval` and `Function`,
 * and the `constructor` of `Function.prototype`, AsyncFunction, GeneratorFunction and
 * AsyncGeneratorFunction prototypes — with functions that throw a coded guest error. The context
 * is also created with `codeGeneration: { strings: false, wasm: false }`, so V8 itself refuses as a
 * second line.
 *
 * The code says how the call was written: `SAND_VM_EVAL_REJECTED` for a plain `eval(…)`,
 * `Function(…)` or `new Function(…)` call, `SAND_VM_INDIRECT_EVAL_REJECTED` for anything else
 * (`(0, eval)(…)`, `globalThis.eval(…)`, `eval?.(…)`, `fn.constructor(…)`,
 * `(async function () {}).constructor(…)`, `Reflect.apply(eval, …)`). It is read from the
 * caller's source text at the position V8 reports for the call.
 *
 * Stacks (plugin frames only: no host paths, no host frames) and the caller's position come
 * from the kernel's errors part, installed before this one.
 */
export function installGuestDynamicCode(kit: GuestKit): void {
  const sources = new Map<string, { text: string; lineStarts: number[] | undefined }>();

  kit.registerSource = (identifier, text) => {
    sources.set(identifier, { text, lineStarts: undefined });
  };

  const offsetOf = (
    source: { text: string; lineStarts: number[] | undefined },
    line: number,
    column: number,
  ): number => {
    if (source.lineStarts === undefined) {
      const starts = [0];
      const text = source.text;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 13 && text.charCodeAt(i + 1) === 10) continue;
        if (c === 10 || c === 13 || c === 0x2028 || c === 0x2029) starts.push(i + 1);
      }
      source.lineStarts = starts;
    }
    const start = source.lineStarts[line - 1];
    return start === undefined ? -1 : start + column - 1;
  };

  const isPlainCall = (callee: (...args: never[]) => unknown, pattern: RegExp): boolean => {
    const position = kit.callerPosition(callee);
    if (position === null || typeof position.file !== "string") return false;
    if (typeof position.line !== "number" || typeof position.column !== "number") return false;
    const source = sources.get(position.file);
    if (source === undefined) return false;
    const offset = offsetOf(source, position.line, position.column);
    if (offset < 0 || !pattern.test(source.text.slice(offset, offset + 64))) return false;
    return !source.text
      .slice(Math.max(0, offset - 64), offset)
      .trimEnd()
      .endsWith(".");
  };

  const reject = (direct: boolean, what: string): Error =>
    direct
      ? kit.makeError(
          "SAND_VM_EVAL_REJECTED",
          `${what} is disabled in this sandbox: code generation from strings is rejected`,
        )
      : kit.makeError(
          "SAND_VM_INDIRECT_EVAL_REJECTED",
          `${what} reached indirectly is disabled in this sandbox: code generation from strings is rejected`,
        );

  const EVAL_CALL = /^eval\s*\(/u;
  const FUNCTION_CALL = /^(?:new\s+)?Function\s*\(/u;
  const guardedEval = {
    eval(_source?: unknown): never {
      throw reject(isPlainCall(guardedEval, EVAL_CALL), "eval");
    },
  }.eval;

  const guardConstructor = (
    prototype: object,
    label: string,
    pattern: RegExp | undefined,
    parent: object,
  ) => {
    // A function declaration, not an arrow: `new Function(…)` must reach the throw, so the guard
    // has to be constructible.
    function guard(): never {
      throw reject(pattern !== undefined && isPlainCall(guard, pattern), `the ${label} constructor`);
    }
    Object.defineProperty(guard, "name", { value: label });
    Object.defineProperty(guard, "prototype", {
      value: prototype,
      writable: false,
      enumerable: false,
      configurable: false,
    });
    Object.setPrototypeOf(guard, parent);
    Object.defineProperty(prototype, "constructor", {
      value: guard,
      writable: true,
      enumerable: false,
      configurable: true,
    });
    kit.hidden.push(guard, prototype);
    return guard;
  };

  const functionPrototype = Function.prototype;
  const asyncFunctionPrototype = Object.getPrototypeOf(async () => {}) as object;
  const generatorFunctionPrototype = Object.getPrototypeOf(function* () {}) as object;
  const asyncGeneratorFunctionPrototype = Object.getPrototypeOf(async function* () {}) as object;
  // Same shape as the originals: %Function%'s prototype is Function.prototype; the others' is %Function%.
  const FunctionGuard = guardConstructor(functionPrototype, "Function", FUNCTION_CALL, functionPrototype);
  guardConstructor(asyncFunctionPrototype, "AsyncFunction", undefined, FunctionGuard);
  guardConstructor(generatorFunctionPrototype, "GeneratorFunction", undefined, FunctionGuard);
  guardConstructor(asyncGeneratorFunctionPrototype, "AsyncGeneratorFunction", undefined, FunctionGuard);
  kit.globals.Function = FunctionGuard;
  kit.globals.eval = guardedEval;
}
