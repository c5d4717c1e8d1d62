import { runInNewContext } from "node:vm";
import { SANDBOX_CODES } from "@suaveplan/sandbox-core/error-codes";
import { CONFORMANCE_CHECKS, type MakeEngine, runConformanceCheck } from "@suaveplan/sandbox-core/testing";
import type {
  EngineLimits,
  LogEntry,
  SandboxEngine,
  SandboxModule,
  SandboxOptions,
  SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { afterEach, describe, expect, it } from "vitest";
import { VmEngine } from "../src/index.js";

// Mutation test of the shared conformance suite: a real VmEngine with one
// subtle flaw injected must fail exactly the check that guards that part of
// the contract, while the unmodified engine passes it.

type Execute = SandboxEngine["execute"];

/** A VmEngine whose `execute` (and optionally `destroy`) is wrapped by a flaw. */
class MutantEngine implements SandboxEngine {
  readonly name = "vm" as const;
  readonly inner: VmEngine;
  constructor(
    limits: Partial<EngineLimits> | undefined,
    private readonly flaw: (inner: VmEngine, ...args: Parameters<Execute>) => Promise<SandboxResult>,
    private readonly onDestroy?: () => void,
  ) {
    this.inner = new VmEngine(limits);
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  execute(code: string, context?: Record<string, unknown>, options?: SandboxOptions): Promise<SandboxResult> {
    return this.flaw(this.inner, code, context, options);
  }
  registerModule(module: SandboxModule): void {
    this.inner.registerModule(module);
  }
  unregisterModule(name: string): boolean {
    return this.inner.unregisterModule(name);
  }
  reset(): void {
    this.inner.reset();
  }
  async destroy(): Promise<void> {
    this.onDestroy?.();
    await this.inner.destroy();
  }
}

const leaked: NodeJS.Timeout[] = [];
afterEach(() => {
  for (const handle of leaked.splice(0)) clearInterval(handle);
});

interface Mutant {
  flaw: string;
  check: string;
  make: MakeEngine;
}

const MUTANTS: Mutant[] = [
  {
    flaw: "returns guest-realm objects instead of host copies",
    check: "returns plain data as-is, copied into host-realm objects",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        if (result.success && typeof result.result === "object" && result.result !== null) {
          result.result = runInNewContext(`(${JSON.stringify(result.result)})`);
        }
        return result;
      }),
  },
  {
    flaw: "copies a cycle once more instead of keeping it",
    check: "returns cyclic results with their cycles",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        if (result.success && typeof result.result === "object" && result.result !== null) {
          const copy = { ...(result.result as Record<string, unknown>) };
          if ("self" in copy) copy.self = { ...copy };
          return { ...result, result: copy };
        }
        return result;
      }),
  },
  {
    flaw: "loses the line of a syntax error",
    check: "reports a syntax error with its message and line",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        return result.success
          ? result
          : { ...result, error: result.error.replace(/ \(line \d+, column \d+\)/, "") };
      }),
  },
  {
    flaw: "writes guest changes back into the host context",
    check: "copies context values in as guest globals and never mutates the host object",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        const obj = context?.obj as { n?: number } | undefined;
        if (obj && result.success && typeof result.result === "object") obj.n = 99;
        return result;
      }),
  },
  {
    flaw: "reports a timeout as a generic failure",
    check: "ends a synchronous loop with SANDBOX_TIMEOUT and stays usable",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        return result.errorCode === SANDBOX_CODES.TIMEOUT
          ? { ...result, errorCode: SANDBOX_CODES.ENGINE_FAILED }
          : result;
      }),
  },
  {
    flaw: "lets a guest timer log after the result was returned",
    check: "cancels every timer when the execution ends with an error",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        const onLog = options?.onLog;
        if (onLog) setTimeout(() => onLog({ level: "log", message: "late timeout" }), 100).unref();
        return result;
      }),
  },
  {
    flaw: "ignores maxOutputSize",
    check: "truncates output at maxOutputSize bytes with the sentinel",
    make: (limits) =>
      new MutantEngine({ ...limits, maxOutputSize: 1024 * 1024 }, (inner, code, context, options) => {
        const { maxOutputSize: _ignored, ...rest } = options ?? {};
        return inner.execute(code, context, rest);
      }),
  },
  {
    flaw: "replays logs at the end instead of streaming them",
    check: "streams a log emitted before a 300 ms sleep before execute resolves",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const { onLog, ...rest } = options ?? {};
        const result = await inner.execute(code, context, rest);
        for (const entry of result.logs as LogEntry[]) onLog?.(entry);
        return result;
      }),
  },
  {
    flaw: "rejects instead of resolving after destroy",
    check: "destroy() is idempotent; later executions resolve SANDBOX_ENGINE_DISPOSED",
    make: (limits) =>
      new MutantEngine(limits, async (inner, code, context, options) => {
        const result = await inner.execute(code, context, options);
        if (result.errorCode === SANDBOX_CODES.ENGINE_DISPOSED) throw new Error("engine is gone");
        return result;
      }),
  },
  {
    flaw: "leaves an interval running after destroy",
    check: "destroy() leaves no handles or child processes behind",
    make: (limits) =>
      new MutantEngine(
        limits,
        (inner, code, context, options) => inner.execute(code, context, options),
        () => {
          leaked.push(setInterval(() => {}, 60_000));
        },
      ),
  },
];

const checkNamed = (name: string) => {
  const check = CONFORMANCE_CHECKS.find((candidate) => candidate.name === name);
  if (!check) throw new Error(`no conformance check named ${JSON.stringify(name)}`);
  return check;
};

const options = { settleMs: 300 };

describe("the conformance suite catches subtle flaws in a real engine", () => {
  for (const mutant of MUTANTS) {
    it(`fails "${mutant.check}" for an engine that ${mutant.flaw}`, async () => {
      const check = checkNamed(mutant.check);
      await expect(runConformanceCheck(check, (limits) => new VmEngine(limits), options)).resolves.toBe(
        "passed",
      );
      await expect(runConformanceCheck(check, mutant.make, options)).rejects.toThrow();
    });
  }
});
