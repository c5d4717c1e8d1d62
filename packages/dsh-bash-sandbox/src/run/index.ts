export {
  type BashEnvironment,
  type ConfinedBashResult,
  type RunConfinedBashOptions,
  runConfinedBash,
} from "./run-confined-bash.js";
export {
  type ConfinedCommandResult,
  type ProcessEnvironment,
  type RunConfinedCommandOptions,
  runConfinedCommand,
} from "./run-confined-command.js";
export { sanitisedEnvironment } from "./sanitised-environment.js";
