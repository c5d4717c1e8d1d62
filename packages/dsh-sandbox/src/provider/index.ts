export { assertConfinedPolicy } from "./assert-confined-policy.js";
export { PROCESS_SANDBOX_CODES, SandboxPolicyError, SandboxUnavailableError } from "./sandbox-errors.js";
export { SandboxProvider } from "./sandbox-provider.js";
