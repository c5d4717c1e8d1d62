export {
  type ChildListener,
  type ChildLogFrame,
  type ChildOutcome,
  DEFAULT_EXIT_GRACE_MS,
  type RaceChildOptions,
  raceChild,
  type SpawnedChild,
} from "./race-child.js";
export { IDENTITY_ENV_KEYS, SENSITIVE_ENV_FRAGMENTS, sanitiseEnv } from "./sanitise-env.js";
export { type ProcessSpawner, SpawnEngine, type SpawnEngineOptions } from "./spawn-engine.js";
