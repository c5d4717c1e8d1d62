export {
  type EngineFactory,
  type EngineLoader,
  type EngineSettings,
  engineLoader,
  registerEngine,
  registeredEngines,
  unregisterEngine,
} from "./engine-registry.js";
export {
  type CreateSandboxConfig,
  createSandbox,
  type Sandbox,
  type SandboxExecuteOptions,
  type SandboxRunResult,
  type SandboxStatistics,
  type SandboxStreamChunk,
  type SandboxToolOptions,
  type SandboxTypecheckOptions,
} from "./sandbox.js";
