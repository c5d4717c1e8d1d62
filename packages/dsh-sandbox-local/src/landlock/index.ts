export {
  createLandlockBackend,
  DEFAULT_PROBE_TIMEOUT_MS,
  type LandlockBackendOptions,
} from "./landlock-backend.js";
export {
  LANDLOCK_DENIAL_SIGNATURES,
  LANDLOCK_LAUNCHER_PREFIX,
  LANDLOCK_LAUNCHER_SETUP_FAILED_EXIT_CODE,
  LANDLOCK_RUNNER_FAILURE_RULES,
  LAYERED_DENIAL_SIGNATURES,
  LAYERED_RUNNER_FAILURE_RULES,
} from "./landlock-dialect.js";
export { landlockLauncherPath } from "./launcher-path.js";
export { createLayeredBackend, type LayeredBackendOptions } from "./layered-backend.js";
