// The confined-bash consumer
export { type BashSandbox, type BashSandboxRequest, bashSandboxPlugin } from "./bash-sandbox-plugin.js";
// The confined PowerShell consumer
export { type PwshSandbox, type PwshSandboxRequest, pwshSandboxPlugin } from "./pwsh-sandbox-plugin.js";
// The services of seed 002: ctx.sandbox and ctx.sandboxPolicy
export {
  SandboxPolicyConfigSchema,
  type SandboxProviderConfig,
  SandboxProviderConfigSchema,
  sandboxPolicyPlugin,
  sandboxProviderPlugin,
} from "./sandbox-services.js";
