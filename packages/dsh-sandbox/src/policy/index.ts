export {
  SANDBOX_MODE_EVENT,
  SandboxPolicyService,
  type SandboxPolicyServiceOptions,
} from "./sandbox-policy-service.js";
export type {
  ConfinedArgv,
  ConfinedSandboxMode,
  RunnerFailureRule,
  SandboxEnforcement,
  SandboxExecutionPolicy,
  SandboxMode,
  SandboxPolicy,
  SandboxPolicyRequest,
  Session,
  SessionEvent,
  SessionId,
} from "./sandbox-policy-types.js";
