// Engine
export {
  ISOLATE_CAPABILITIES,
  ISOLATE_HELPER_CAPABILITIES,
  IsolateEngine,
  type IsolateEngineOptions,
  type IsolateProcessOption,
  type NodeSnapshotPolicy,
} from "./isolate-engine/isolate-engine.js";

// Isolate factory contract (structural mirror of isolated-vm 5.x)
export type {
  CreateIsolateOptions,
  HostCallbackFunction,
  IsolateApplyOptions,
  IsolateCallback,
  IsolateContext,
  IsolateFactory,
  IsolateHandle,
  IsolateHeapStatistics,
  IsolateReference,
  IsolateReferenceOption,
  IsolateScript,
} from "./isolate-factory/isolate-factory.js";
export {
  createIsolatedVmFactory,
  ISOLATED_VM_INSTALL_HINT,
  type IsolatedVmFactoryOptions,
} from "./isolate-factory/isolated-vm-factory.js";
export {
  ISOLATED_VM_MAJORS,
  isolatedVmInstallHint,
  isolatedVmMajorsFor,
} from "./isolate-factory/isolated-vm-versions.js";

// Node startup-snapshot detection
export { isNodeSnapshotDisabled, needsNoNodeSnapshot } from "./node-snapshot/node-snapshot.js";
