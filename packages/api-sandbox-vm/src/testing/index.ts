// Harness

export {
  type ConformanceEnv,
  createConformanceEnv,
  createRecordingMetrics,
  type DenialMetrics,
  type MakeVmSandbox,
  type ReceivedRequest,
  type ScenarioServer,
} from "./conformance-env.js";
// Scenarios and their environment (to reuse single scenarios under your own test names)
export {
  countingFsAdapter,
  EXPECTED_GLOBAL_NAMES,
  VM_CONFORMANCE_SCENARIOS,
  type VmConformanceScenario,
  vmConformanceScenario,
} from "./conformance-scenarios.js";
export {
  runVmSandboxConformance,
  type VmConformanceOptions,
  type VmConformanceReport,
} from "./run-vm-conformance.js";
