export { PROCESS_SANDBOX_CODES, SandboxProvider, SandboxUnavailableError } from "./sandbox-provider.js";
