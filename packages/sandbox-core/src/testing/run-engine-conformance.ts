import { afterEach, describe, it } from "vitest";
import type { EngineLimits, SandboxEngine } from "../types/sandbox-types.js";
import {
  CONFORMANCE_CHECKS,
  CONFORMANCE_DEFAULTS,
  type ConformanceCheck,
  type ConformanceEnv,
  checkApplies,
  type EngineConformanceOptions,
  type ResolvedConformanceOptions,
} from "./conformance-checks.js";

/** Builds a fresh engine, optionally with limits. Called once or more per check. */
export type MakeEngine = (limits?: Partial<EngineLimits>) => SandboxEngine | Promise<SandboxEngine>;

/**
 * Register the one engine contract suite with vitest. Every engine package
 * runs it from a test file:
 *
 * ```ts
 * import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
 * runEngineConformance("vm", (limits) => new VmEngine(limits));
 * ```
 *
 * Checks are skipped only by the engine's declared `capabilities`
 * (`enforcesMemoryLimit`, `boundsAsyncWork`, `streamsLogs`, `memoryAccounting`), never by name.
 * Each check builds its own engine(s) through `makeEngine` and destroys them
 * afterwards.
 *
 * The contract (decided once, all engines agree):
 * - The code is a script; its completion value is the result. A returned
 *   promise (thenable) is awaited within the same timeout. Code using
 *   top-level `await` or `return` runs as an async function body whose last
 *   expression statement is the result (`toGuestScript` from
 *   `@suaveplan/sandbox-core/guest-script`).
 * - `execute` never rejects for a failure of the guest's code: it resolves
 *   `success: false` with `error` text and an `errorCode`. Thrown values,
 *   rejected promises and syntax errors give `SANDBOX_ENGINE_FAILED`; the
 *   text is `Name: message` for Errors (no stack frames, no host paths),
 *   `String(value)` for primitives and JSON for plain objects
 *   (`throw {a:1}` → `{"a":1}`); a syntax error names its line (`line 3`).
 * - Results cross as JSON-compatible data by structured copy into host-realm
 *   plain objects and arrays (shared, non-cyclic references are copied
 *   twice). `undefined` gives `success: true` with `result: undefined`.
 *   A function, class, symbol or BigInt anywhere in the value, or a cycle,
 *   gives `success: false`, `SANDBOX_ENGINE_FAILED` and the error
 *   `result is not transferable: function` (`symbol`, `bigint`, `cyclic`).
 * - `context` values and registered data modules are copied in as guest
 *   globals; the host objects are never mutated. A `{ name, source }`
 *   module runs inside the sandbox and its `module.exports` becomes the
 *   global. `unregisterModule` and `reset` remove modules.
 * - Timeouts (`SANDBOX_TIMEOUT`, error text mentions the timeout) bound sync
 *   loops, and — where `boundsAsyncWork` — microtask loops, never-settling
 *   promises and outliving timers. The engine is usable afterwards.
 * - `setTimeout`, `setInterval`, `clearTimeout`, `clearInterval` and
 *   `queueMicrotask` exist. A pending timer keeps the execution alive until
 *   it fires or the timeout ends it; every timer is cancelled when the
 *   execution ends, so no guest callback (and no `onLog` call) happens after
 *   `execute` resolves.
 * - Where `enforcesMemoryLimit`, an allocation bomb gives
 *   `SANDBOX_MEMORY_EXCEEDED`; host and engine survive. So does every bomb
 *   of the `MEMORY_BOMB_ROWS` table (heap, strings, array buffers,
 *   shared array buffers, Wasm memory; synchronous and yielding) that the
 *   engine's `capabilities.memoryAccounting` says it bounds, and `memoryUsed`
 *   counts the array buffers a run holds where it counts them.
 * - Console `log/info/warn/error/debug` are captured with their level, in
 *   order, arguments joined by spaces, cut at `maxOutputSize` bytes with a
 *   `warn` entry `[output truncated at N bytes]` (see `LogCollector`); one
 *   line stops formatting entries near 8 × `maxOutputSize` characters; every
 *   entry reaches `options.onLog` before `execute` resolves, while the guest
 *   runs where `streamsLogs`.
 * - Concurrent executions keep their own results, logs and contexts;
 *   globals and prototype changes never leak into the next execution.
 * - `destroy()` is idempotent; `execute` after it RESOLVES `success: false`
 *   with `SANDBOX_ENGINE_DISPOSED`; it leaves no active handle or child
 *   process behind.
 *
 * @param label - Shown in the suite name, e.g. `"vm"`.
 * @param makeEngine - Builds an engine; receives limits some checks need.
 * @param options - Timeouts and sizes for slow engines; see {@link EngineConformanceOptions}.
 */
export function runEngineConformance(
  label: string,
  makeEngine: MakeEngine,
  options: EngineConformanceOptions = {},
): void {
  const resolved: ResolvedConformanceOptions = { ...CONFORMANCE_DEFAULTS, ...options };
  const live: SandboxEngine[] = [];

  describe(`${label} engine conformance`, () => {
    afterEach(async () => {
      const engines = live.splice(0);
      await Promise.all(engines.map((engine) => engine.destroy()));
    });

    const groups = new Map<string, ConformanceCheck[]>();
    for (const check of CONFORMANCE_CHECKS) {
      const list = groups.get(check.group) ?? [];
      list.push(check);
      groups.set(check.group, list);
    }
    for (const [group, checks] of groups) {
      describe(group, () => {
        for (const check of checks) {
          it(
            check.name,
            async (ctx) => {
              const env = createEnv(makeEngine, resolved, live);
              if (check.requires !== undefined || check.appliesTo !== undefined) {
                const probe = await env.engine();
                if (!checkApplies(check, probe.capabilities)) {
                  ctx.skip(
                    check.requires !== undefined && probe.capabilities[check.requires] !== true
                      ? `engine declares capabilities.${check.requires} = false`
                      : "the engine's declared capabilities exclude this check",
                  );
                }
              }
              await check.run(env);
            },
            resolved.testTimeoutMs,
          );
        }
      });
    }
  });
}

/** A {@link ConformanceEnv} whose engines are tracked in `live` for cleanup. */
export function createEnv(
  makeEngine: MakeEngine,
  options: ResolvedConformanceOptions,
  live: SandboxEngine[],
): ConformanceEnv {
  return {
    options,
    async engine(limits) {
      const engine = await makeEngine({ timeout: options.timeoutMs, ...limits });
      live.push(engine);
      return engine;
    },
  };
}

/**
 * Run one check outside the suite (e.g. to prove a deliberately broken
 * engine fails it). Rejects with the assertion error when the engine breaks
 * the contract; resolves `"skipped"` when the engine lacks the capability
 * the check requires. Engines made for the check are destroyed afterwards.
 */
export async function runConformanceCheck(
  check: ConformanceCheck,
  makeEngine: MakeEngine,
  options: EngineConformanceOptions = {},
): Promise<"passed" | "skipped"> {
  const live: SandboxEngine[] = [];
  const env = createEnv(makeEngine, { ...CONFORMANCE_DEFAULTS, ...options }, live);
  try {
    if (
      (check.requires !== undefined || check.appliesTo !== undefined) &&
      !checkApplies(check, (await env.engine()).capabilities)
    )
      return "skipped";
    await check.run(env);
    return "passed";
  } finally {
    await Promise.all(live.map((engine) => engine.destroy()));
  }
}
