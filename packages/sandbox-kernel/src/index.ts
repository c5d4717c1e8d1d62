// @suaveplan/sandbox-kernel: the code that runs INSIDE a sandbox's realm. It imports nothing;
// the build bundles each profile into the one script a realm evaluates (`./sources`).

export { createHostCodec, installCodec } from "./codec/install-codec.js";
export { createKernel, type Kernel, type KernelPart } from "./create-kernel.js";
export type {
  CallerPosition,
  ErrorRecord,
  KernelBridge,
  KernelConfig,
  KernelKit,
  NotTransferableRecord,
} from "./kit.js";
export { type CallsKit, installCalls, type RunConfig } from "./parts/install-calls.js";
export { installCodeGeneration } from "./parts/install-code-generation.js";
export { installConsole } from "./parts/install-console.js";
export { installErrors } from "./parts/install-errors.js";
export { installHardening } from "./parts/install-hardening.js";
export { installInspect } from "./parts/install-inspect.js";
export { installRealm } from "./parts/install-realm.js";
export { installSettle } from "./parts/install-settle.js";
export { installTimers } from "./parts/install-timers.js";
export { installUrl } from "./parts/install-url.js";
export { installWebGlobals } from "./parts/install-web-globals.js";
export type { GuestHostApi } from "./plugin/guest-host-api.js";
export type {
  CrossingError,
  GuestBridge,
  GuestConfig,
  GuestKit,
  ToolCrossingError,
} from "./plugin/guest-kit.js";
export { KERNEL_PROFILES, type KernelProfileName } from "./profiles/index.js";
export { PLUGIN_PARTS } from "./profiles/plugin.js";
