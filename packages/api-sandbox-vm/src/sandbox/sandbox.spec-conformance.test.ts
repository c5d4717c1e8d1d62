import { afterEach, it } from "vitest";
import { type ConformanceEnv, createConformanceEnv } from "../testing/conformance-env.js";
import { vmConformanceScenario } from "../testing/conformance-scenarios.js";
import { createVmSandbox } from "./create-vm-sandbox.js";

let env: ConformanceEnv | undefined;
afterEach(async () => {
  await env?.cleanup();
});

// Dispose twice returns the same settled promise: the worker is terminated once, the one
// in-flight adapter call is aborted once, in-flight calls reject with SAND_VM_DISPOSED.
it("dispose is idempotent", async () => {
  env = createConformanceEnv(createVmSandbox);
  await vmConformanceScenario("dispose is idempotent").run(env);
});
