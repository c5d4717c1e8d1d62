export {
  createSandbox,
  type Sandbox,
  type SandboxStatistics,
} from "./sandbox.js";
export type { SandboxStreamChunk } from "./stream-execution.js";
