// Sandbox

// Host tools (the facade's shapes)
export type { ToolCallRecord, ToolCallStatus, ToolDefinition, ToolSet } from "@suaveplan/sandbox-tools";
// Errors
export { isVmSandboxError, SAND_VM_CODES, type SandVmCode, VmSandboxError } from "./errors/sand-vm-codes.js";
// Frozen globals
export { FROZEN_GLOBALS, type FrozenGlobalName } from "./frozen-globals/frozen-globals.js";
export { PLUGIN_URL_PREFIX } from "./module-loader/plugin-url.js";
export type { FetchHostAdapter } from "./proxies/fetch-proxy/fetch-proxy.js";
export {
  createNodeFsAdapter,
  FS_OPERATIONS,
  type FsHostAdapter,
  type FsOperation,
  type FsStat,
  NotRegularFileError,
} from "./proxies/fs-proxy/fs-proxy.js";
// Capability proxies
export {
  type CapabilityName,
  type CapabilityProxies,
  type CapabilityProxyOptions,
  installCapabilityProxies,
  type VmSandboxProxies,
} from "./proxies/install-capability-proxies.js";
export {
  createVmSandbox,
  type VmSandboxCapabilities,
  type VmSandboxHandle,
} from "./sandbox/create-vm-sandbox.js";
export type { VmSandboxOptions } from "./sandbox/vm-sandbox-options.js";
