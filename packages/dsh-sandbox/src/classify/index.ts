export {
  type ConfinedRunClassification,
  type ConfinedRunDialect,
  type ConfinedRunOutcome,
  type ConfinedRunResult,
  classifyConfinedRun,
  NETWORK_DENIAL_SIGNATURES,
} from "./classify-confined-run.js";
