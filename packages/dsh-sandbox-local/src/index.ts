// The provider

// The backend interface
export type {
  BackendProbeResult,
  DeniedRead,
  LocalBackend,
  LocalBackendName,
  LocalConfinePolicy,
} from "./backend/index.js";
// Linux: bubblewrap
export { type BwrapBackendOptions, createBwrapBackend } from "./bwrap/bwrap-backend.js";
export { explainBwrapFailure } from "./bwrap/bwrap-diagnosis.js";
export {
  BWRAP_DENIAL_SIGNATURES,
  BWRAP_ROOT_DENIAL_SIGNATURES,
  BWRAP_RUNNER_FAILURE_RULES,
} from "./bwrap/bwrap-dialect.js";
// Host seam
export { type HostRunResult, type LocalHost, nodeLocalHost } from "./host/index.js";
// Linux: Landlock and Landlock inside bubblewrap
export {
  createLandlockBackend,
  createLayeredBackend,
  LANDLOCK_DENIAL_SIGNATURES,
  LANDLOCK_RUNNER_FAILURE_RULES,
  LAYERED_DENIAL_SIGNATURES,
  LAYERED_RUNNER_FAILURE_RULES,
  type LandlockBackendOptions,
  type LayeredBackendOptions,
  landlockLauncherPath,
} from "./landlock/index.js";
// Network allow-list: the filtering proxy
export { checkAllowList, hostAllowed } from "./network/domain-allow-list.js";
export {
  type FilteringProxy,
  type FilteringProxyOptions,
  PROXY_DENIAL_PREFIX,
  PROXY_DENIAL_REASON,
  type ProxyDenial,
  startFilteringProxy,
} from "./network/filtering-proxy.js";
export {
  DEFAULT_BACKEND_FACTORIES,
  defaultBackendsFor,
  type LocalBackendContext,
  type LocalBackendFactory,
} from "./provider/backend-registry.js";
export {
  type LocalSandboxPolicy,
  LocalSandboxProvider,
  type LocalSandboxProviderOptions,
  PROXY_DENIAL_SIGNATURES,
} from "./provider/local-sandbox-provider.js";
export { DEFAULT_PROTECTED_PATHS, SECRETS_DENY_READ } from "./provider/path-policy.js";
export { createFileProbeCache, type ProbeCache } from "./provider/probe-cache.js";
// macOS: Seatbelt
export {
  createSeatbeltBackend,
  SEATBELT_DENIAL_SIGNATURES,
  SEATBELT_RUNNER_FAILURE_RULES,
  type SeatbeltBackendOptions,
} from "./seatbelt/seatbelt-backend.js";
export { buildSeatbeltProfile, type SeatbeltProfile } from "./seatbelt/seatbelt-profile.js";
// Windows: restricted token + ACLs
export {
  createWindowsAclBackend,
  WINDOWS_ACL_DENIAL_SIGNATURES,
  WINDOWS_ACL_RUNNER_FAILURE_RULES,
  type WindowsAclBackendOptions,
} from "./windows-acl/windows-acl-backend.js";
export {
  planWindowsAcl,
  randomSessionSid,
  WELL_KNOWN_SIDS,
  WINDOWS_ACL_GAPS,
  type WindowsAclEntry,
  type WindowsAclPlan,
  workspaceSidOf,
} from "./windows-acl/windows-acl-plan.js";
