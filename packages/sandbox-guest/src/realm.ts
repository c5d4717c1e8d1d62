// @suaveplan/sandbox-guest/realm: the runtime's realm side — what runs where guest code runs
// (a worker thread, a child process, an isolate's helper): the driver, the node:vm realm, the
// kernel's script, the request as data, the protocol and the outcome. Nothing here prepares
// code (no TypeScript, no parser): `scripts/check-layers.mjs` holds it to that.

// Kernel
export type {
  ErrorRecord,
  KernelBridge,
  KernelConfig,
  KernelKit,
  KernelProfileName,
  NotTransferableRecord,
} from "@suaveplan/sandbox-kernel";
// Codec (one implementation, both realms)
export { createHostCodec } from "@suaveplan/sandbox-kernel";
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
export {
  capWasmMemory,
  capWasmMemorySource,
  refusedAllocation,
  WASM_CAP_SUFFIX,
} from "./kernel/cap-wasm-memory.js";
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
export {
  type ContextPrimitive,
  DEFAULT_MAX_CALL_BYTES,
  DEFAULT_MAX_LOG_LINES,
  DEFAULT_MAX_TIMERS,
  driverPlanOf,
  type ExecutionRequest,
  TIMER_CREATIONS_PER_PENDING,
  withoutCode,
} from "./request/execution-request.js";
export { readExecutionRequest } from "./request/read-execution-request.js";
// node:vm realm (vm, worker and spawn engines)
export { GuestScriptCache } from "./vm-realm/guest-script-cache.js";
export { isHostError, isHostTimeout } from "./vm-realm/host-guards.js";
export { isolateMemoryBytes, isolateMemoryParts, memoryGrownSince } from "./vm-realm/isolate-memory.js";
export { startVmExecution, type VmExecutionHooks } from "./vm-realm/start-vm-execution.js";
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
