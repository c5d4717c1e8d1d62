// The bash consumer
// The shared runtime of every shell consumer: spawning, bounding, reaping, attribution
export {
  type BashEnvironment,
  type ConfinedBashResult,
  type ConfinedCommandResult,
  type ProcessEnvironment,
  type RunConfinedBashOptions,
  type RunConfinedCommandOptions,
  runConfinedBash,
  runConfinedCommand,
  sanitisedEnvironment,
} from "./run/index.js";
