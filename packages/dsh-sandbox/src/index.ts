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
} from "./policy/index.js";
export { PROCESS_SANDBOX_CODES, SandboxProvider, SandboxUnavailableError } from "./provider/index.js";
