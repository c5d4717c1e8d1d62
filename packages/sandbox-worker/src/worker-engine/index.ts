export {
  WORKER_CAPABILITIES,
  WORKER_STARTUP_TIMEOUT_MS,
  WorkerEngine,
  type WorkerEngineOptions,
} from "./worker-engine.js";
