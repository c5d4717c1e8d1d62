// Engine
// Child lifecycle
// Environment
export {
  type ChildListener,
  type ChildLogFrame,
  type ChildOutcome,
  DEFAULT_EXIT_GRACE_MS,
  IDENTITY_ENV_KEYS,
  type ProcessSpawner,
  type RaceChildOptions,
  raceChild,
  SENSITIVE_ENV_FRAGMENTS,
  SpawnEngine,
  type SpawnEngineOptions,
  type SpawnedChild,
  sanitiseEnv,
} from "./spawn-engine/index.js";
