import { afterEach, describe, expect, it } from "vitest";
import { createVmSandbox, type VmSandboxHandle } from "../sandbox/create-vm-sandbox.js";
import type { VmSandboxOptions } from "../sandbox/vm-sandbox-options.js";
import { type ConformanceEnv, createConformanceEnv } from "./conformance-env.js";
import { VM_CONFORMANCE_SCENARIOS } from "./conformance-scenarios.js";

// A harness that asserted nothing would pass this host: it loads the plugin for real but answers
// every call with `undefined`. Every scenario must reject it.
async function answersUndefined(options: VmSandboxOptions): Promise<VmSandboxHandle> {
  const real = await createVmSandbox(options);
  return {
    get exports() {
      return real.exports;
    },
    exportNames: real.exportNames,
    capabilities: real.capabilities,
    get disposed() {
      return real.disposed;
    },
    call: async () => undefined,
    calls: () => real.calls(),
    dispose: () => real.dispose(),
    [Symbol.asyncDispose]: () => real.dispose(),
  };
}

let env: ConformanceEnv | undefined;
afterEach(async () => {
  await env?.cleanup();
  env = undefined;
});

describe("runVmSandboxConformance self-test", () => {
  for (const scenario of VM_CONFORMANCE_SCENARIOS) {
    it(`"${scenario.name}" fails a host that answers every call with undefined`, async () => {
      env = createConformanceEnv(answersUndefined, undefined, () => {});
      await expect(scenario.run(env)).rejects.toThrow();
    });
  }
});
