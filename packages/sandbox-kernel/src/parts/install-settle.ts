import type { ErrorRecord, KernelKit } from "../kit.js";
import type { CallsKit } from "./install-calls.js";

/**
 * GUEST REALM. The execution's entries: `boot` (limits, context globals and
 * data modules, as codec text), `defineModule` (a registered source module's
 * factory), `evaluate` (for realms where the kernel runs the code itself),
 * `settle` (the completion value, awaited when it is a thenable) and `fail`
 * (a value the code threw). The outcome is reported once through the bridge:
 * `value` with codec text, `untransferable` with `{ path, what }` JSON, or
 * `error` with an {@link ErrorRecord} JSON.
 */
export function installSettle(kit: KernelKit & CallsKit): void {
  const { apply, ownKeys } = Reflect;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  // Captured before guest code runs; only realms that evaluate code themselves (isolated-vm) call `evaluate`.
  // biome-ignore lint/security/noGlobalEval: the kernel is the one place guest code is evaluated from a string.
  const indirectEval = globalThis.eval;
  let settled = false;

  const finish = (value: unknown): void => {
    let text: string;
    try {
      text = kit.encode(value, "result", kit.runConfig.maxResultBytes);
    } catch (error) {
      if (kit.isNotTransferable(error))
        kit.report("untransferable", stringify({ path: error.path, what: error.what }));
      else kit.reportError(error);
      return;
    }
    kit.report("value", text);
  };

  const settle = (value: unknown): void => {
    if (settled) return;
    settled = true;
    if (value !== null && (typeof value === "object" || typeof value === "function")) {
      let then: unknown;
      try {
        then = (value as { then?: unknown }).then;
      } catch (error) {
        kit.reportError(error);
        return;
      }
      if (typeof then === "function") {
        // `await`, not `.then()`: it never looks up `constructor` or `Symbol.species`, which guest code may redefine.
        void (async () => {
          let settledValue: unknown;
          try {
            settledValue = await value;
          } catch (error) {
            kit.reportError(error);
            return;
          }
          finish(settledValue);
        })();
        return;
      }
    }
    finish(value);
  };

  kit.entries.boot = (runConfigJson: string, contextText: string, modulesText: string) => {
    kit.runConfig = parse(runConfigJson);
    const tools = kit.runConfig.tools;
    if (tools !== undefined && tools.length > 0) kit.defineTools(tools);
    if (modulesText !== "") {
      const modules = parse(modulesText) as [string, string][];
      for (let i = 0; i < modules.length; i++) {
        const entry = modules[i] as [string, string];
        kit.defineGlobal(entry[0], kit.decode(entry[1]));
      }
    }
    if (contextText !== "") {
      const context = kit.decode(contextText) as Record<string, unknown>;
      const names = ownKeys(context);
      for (let i = 0; i < names.length; i++) {
        const name = names[i] as string;
        kit.defineGlobal(name, context[name]);
      }
    }
  };
  kit.entries.defineModule = (name: string, factory: unknown) => {
    const exports = {};
    const module = { exports };
    try {
      apply(factory as (m: unknown, e: unknown) => unknown, exports, [module, exports]);
    } catch (error) {
      let record: ErrorRecord;
      try {
        record = kit.describeError(error);
      } catch {
        record = { name: "", message: "a value that could not be described", stack: "" };
      }
      record.module = name;
      kit.report("error", stringify(record));
      return;
    }
    kit.defineGlobal(name, module.exports);
  };
  kit.entries.settle = settle;
  kit.entries.fail = (thrown: unknown) => {
    if (settled) return;
    settled = true;
    kit.reportError(thrown);
  };
  kit.entries.unhandled = (reason: unknown) => {
    let record: ErrorRecord;
    try {
      record = kit.describeError(reason);
    } catch {
      record = { name: "", message: "a value that could not be described", stack: "" };
    }
    record.unhandledRejection = true;
    kit.report("error", stringify(record));
  };
  kit.entries.evaluate = (source: string) => {
    let value: unknown;
    try {
      value = indirectEval(`${source}\n//# sourceURL=${kit.config.guestFilename}`);
    } catch (error) {
      if (!settled) {
        settled = true;
        kit.reportError(error);
      }
      return;
    }
    settle(value);
  };
}
