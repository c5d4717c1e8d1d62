// Classification of a finished confined run
export {
  type ConfinedRunClassification,
  type ConfinedRunDialect,
  type ConfinedRunOutcome,
  type ConfinedRunResult,
  classifyConfinedRun,
  NETWORK_DENIAL_SIGNATURES,
} from "./classify/index.js";
// Policy types and the per-call policy service
export type {
  ConfinedArgv,
  ConfinedSandboxMode,
  RunnerFailureRule,
  SandboxEnforcement,
  SandboxExecutionPolicy,
  SandboxMode,
  SandboxPolicy,
  SandboxPolicyRequest,
  SandboxPolicyServiceOptions,
  Session,
  SessionEvent,
  SessionId,
} from "./policy/index.js";
export { SANDBOX_MODE_EVENT, SandboxPolicyService } from "./policy/index.js";
// The provider seam and its errors
export {
  assertConfinedPolicy,
  PROCESS_SANDBOX_CODES,
  SandboxPolicyError,
  SandboxProvider,
  SandboxUnavailableError,
} from "./provider/index.js";
