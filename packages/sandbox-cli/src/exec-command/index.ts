export { EXIT_SANDBOX_FAILURE, type ExecOptions, execCommand, probeCommand } from "./exec-command.js";
export { shellQuote } from "./shell-quote.js";
