export {
  type EngineFactory,
  type EngineLoader,
  type EngineSettings,
  registerEngine,
  registeredEngines,
  unregisterEngine,
} from "./engine-registry.js";
export {
  createSandbox,
  type Sandbox,
  type SandboxStatistics,
  type SandboxStreamChunk,
} from "./sandbox.js";
