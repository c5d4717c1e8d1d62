export {
  type BashEnvironment,
  type ConfinedBashResult,
  type RunConfinedBashOptions,
  runConfinedBash,
} from "./run/index.js";
