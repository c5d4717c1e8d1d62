export { type CliIo, processIo } from "./cli/cli-io.js";
export { EXIT_CODES, type ExitCode } from "./cli/exit-codes.js";
export { STOP_EXIT_CODES, type StopReason } from "./cli/process-stop.js";
export { createProgram, runCli } from "./cli/program.js";
export { UsageError } from "./cli/usage-error.js";
export { EXEC_EXIT_CODES } from "./exec-command/exec-exit-codes.js";
