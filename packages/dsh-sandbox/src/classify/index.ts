export {
  type ConfinedRunClassification,
  type ConfinedRunDialect,
  type ConfinedRunOutcome,
  type ConfinedRunResult,
  classifyConfinedRun,
} from "./classify-confined-run.js";
