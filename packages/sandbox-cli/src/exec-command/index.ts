export { MAX_DURATION_MS } from "./duration.js";
export {
  commandEnvironment,
  EXIT_SANDBOX_FAILURE,
  type ExecOptions,
  execCommand,
  PASSED_THROUGH_ENV,
  probeCommand,
} from "./exec-command.js";
export { EXEC_EXIT_CODES } from "./exec-exit-codes.js";
export { shellQuote } from "./shell-quote.js";
