export { type CliIo, processIo } from "./cli/cli-io.js";
export { EXIT_CODES, type ExitCode } from "./cli/exit-codes.js";
export { createProgram, runCli } from "./cli/program.js";
export { UsageError } from "./cli/usage-error.js";
