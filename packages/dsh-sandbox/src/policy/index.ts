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
