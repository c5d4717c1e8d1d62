import { afterEach, describe, it } from "vitest";
import {
  type ConformanceEnv,
  createConformanceEnv,
  type DenialMetrics,
  type MakeVmSandbox,
} from "./conformance-env.js";
import { VM_CONFORMANCE_SCENARIOS } from "./conformance-scenarios.js";

/** Outcome of one harness run, filled in as its tests finish (read it from a later test). */
export interface VmConformanceReport {
  readonly label: string;
  /** Every scenario name the harness registered. */
  readonly scenarios: readonly string[];
  readonly passed: string[];
  readonly failed: string[];
}

/** Options of {@link runVmSandboxConformance}. */
export interface VmConformanceOptions {
  /** Per-test timeout, ms. Default 60 000 (each scenario starts real workers and servers). */
  testTimeoutMs?: number;
  /** Read the denial metric through your own provider/reader (e.g. an SDK in-memory reader). Default: a recording provider. */
  metrics?: () => DenialMetrics;
}

/**
 * Register the vm plugin-host contract suite with vitest:
 *
 * ```ts
 * import { runVmSandboxConformance } from "@suaveplan/api-sandbox-vm/testing";
 * runVmSandboxConformance("my host", (options) => createMyHost(options));
 * ```
 *
 * It re-runs every scenario of the spec against hosts built by `makeSandbox`: frozen and
 * allowlisted globals, no `process`, direct and indirect dynamic code rejected with their codes,
 * the classic membrane escapes (constructor chains from objects, proxy functions, host-raised
 * errors and promises; `Error.prepareStackTrace`), module loading limited to the plugin's own
 * folder, permission-checked fs and fetch proxies with the denial metric, call timeouts, CPU
 * runaway, and idempotent disposal. Each scenario writes its plugin into a temp folder, starts
 * real HTTP servers on 127.0.0.1 where needed, and cleans everything up.
 *
 * @returns a report whose `passed`/`failed` lists fill in as the tests run.
 */
export function runVmSandboxConformance(
  label: string,
  makeSandbox: MakeVmSandbox,
  options: VmConformanceOptions = {},
): VmConformanceReport {
  const report: VmConformanceReport = {
    label,
    scenarios: VM_CONFORMANCE_SCENARIOS.map((s) => s.name),
    passed: [],
    failed: [],
  };
  let env: ConformanceEnv | undefined;
  describe(`${label} vm sandbox conformance`, () => {
    afterEach(async () => {
      await env?.cleanup();
      env = undefined;
    });
    const groups = new Map<string, typeof VM_CONFORMANCE_SCENARIOS>();
    for (const scenario of VM_CONFORMANCE_SCENARIOS)
      groups.set(scenario.group, [...(groups.get(scenario.group) ?? []), scenario]);
    for (const [group, scenarios] of groups) {
      describe(group, () => {
        for (const scenario of scenarios) {
          it(
            scenario.name,
            async () => {
              env = createConformanceEnv(makeSandbox, options.metrics?.());
              try {
                await scenario.run(env);
              } catch (error) {
                report.failed.push(scenario.name);
                throw error;
              }
              report.passed.push(scenario.name);
            },
            options.testTimeoutMs ?? 60_000,
          );
        }
      });
    }
  });
  return report;
}
