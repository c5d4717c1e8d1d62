// @suaveplan/sandbox-guest: the one guest runtime. Engines keep only their lifecycle and a transport.
// The host side (the engine shell, preparing code, answering calls) is here; the realm side is
// `./realm.ts`, re-exported whole.

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
export { ModuleRegistry } from "./prepare/module-registry.js";
export {
  type BuiltRequest,
  buildExecutionRequest,
  type CheckedInput,
  checkExecutionInput,
  contextCopyFailure,
  type RequestDefaults,
} from "./prepare/prepare-execution.js";
export { refuseDynamicImport } from "./prepare/refuse-dynamic-import.js";
export { isStraightLine } from "./prepare/straight-line.js";
export * from "./realm.js";
