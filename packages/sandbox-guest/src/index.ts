// @suaveplan/sandbox-guest: the one guest runtime. Engines keep only their lifecycle and a transport.

// Codec (one implementation, both realms)
export { createHostCodec } from "./codec/install-codec.js";
// Driver
export {
  type DriverPlan,
  type DriverResult,
  GuestDriver,
  type GuestRealm,
  parseErrorRecord,
  type RealmStatus,
  type SourceModule,
} from "./driver/guest-driver.js";
// Host side of an engine
export { answerCall, type HostCallHandler } from "./host/answer-call.js";
export {
  DriverEventReceiver,
  type DriverEventReceiverHooks,
  type DriverReport,
} from "./host/driver-event-receiver.js";
export {
  type DisposedWording,
  type EngineRun,
  EngineShell,
  EngineShellBase,
  type PreparedRun,
  type ReadyRequest,
} from "./host/engine-shell.js";
export {
  type BuiltRequest,
  buildExecutionRequest,
  type CheckedInput,
  type ContextPrimitive,
  checkExecutionInput,
  DEFAULT_MAX_CALL_BYTES,
  DEFAULT_MAX_LOG_LINES,
  DEFAULT_MAX_TIMERS,
  driverPlanOf,
  type ExecutionRequest,
  type RequestDefaults,
  TIMER_CREATIONS_PER_PENDING,
  withoutCode,
} from "./host/execution-request.js";
export { ModuleRegistry } from "./host/module-registry.js";
export { readExecutionRequest } from "./host/read-execution-request.js";
export { refuseDynamicImport } from "./host/refuse-dynamic-import.js";
export {
  capWasmMemory,
  capWasmMemorySource,
  refusedAllocation,
  WASM_CAP_SUFFIX,
} from "./kernel/cap-wasm-memory.js";
// Kernel
export type {
  ErrorRecord,
  KernelBridge,
  KernelConfig,
  KernelKit,
  NotTransferableRecord,
} from "./kernel/kernel-kit.js";
export {
  buildKernelSource,
  GUEST_FILENAME,
  hostEntropy,
  kernelConfig,
  MODULE_FILENAME_PREFIX,
  MODULE_WRAPPER_CLOSE,
  MODULE_WRAPPER_OPEN,
} from "./kernel/kernel-source.js";
// Outcome
export { described, errorHeadline, type ResultExtras, toSandboxResult } from "./outcome/to-sandbox-result.js";
// Protocol
export {
  type CallReply,
  type DriverEvent,
  type GuestCall,
  type GuestOutcome,
  LOG_LEVELS,
} from "./protocol/protocol.js";
// node:vm realm (vm, worker and spawn engines)
export { GuestScriptCache } from "./vm-realm/guest-script-cache.js";
export { isHostError, isHostTimeout } from "./vm-realm/host-guards.js";
export { isolateMemoryBytes, isolateMemoryParts, memoryGrownSince } from "./vm-realm/isolate-memory.js";
export { startVmExecution, type VmExecutionHooks } from "./vm-realm/start-vm-execution.js";
export { isStraightLine } from "./vm-realm/straight-line.js";
export {
  type CodeCacheStatus,
  compileGuestScript,
  createVmRealm,
  kernelCacheStatus,
  kernelCodeCache,
  newKernelBinding,
  type PreparedRealmLimits,
  PreparedVmRealm,
  prepareVmRealm,
  useKernelScript,
  type VmRealmOptions,
  v8SyntaxRecord,
} from "./vm-realm/vm-realm.js";
