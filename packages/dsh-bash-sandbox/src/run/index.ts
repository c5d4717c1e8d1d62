export {
  type BashEnvironment,
  type ConfinedBashResult,
  type RunConfinedBashOptions,
  runConfinedBash,
} from "./run-confined-bash.js";
export { sanitisedEnvironment } from "./sanitised-environment.js";
