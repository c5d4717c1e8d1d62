export {
  type BashEnvironment,
  type ConfinedBashResult,
  type RunConfinedBashOptions,
  runConfinedBash,
  sanitisedEnvironment,
} from "./run/index.js";
