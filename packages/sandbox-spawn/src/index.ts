// Engine and child lifecycle
export {
  type ChildListener,
  type ChildLogFrame,
  type ChildOutcome,
  DEFAULT_EXIT_GRACE_MS,
  type ProcessSpawner,
  type RaceChildOptions,
  raceChild,
  SpawnEngine,
  type SpawnEngineOptions,
  type SpawnedChild,
} from "./spawn-engine/index.js";
// Environment (moved to @suaveplan/sandbox-core/env; re-exported here for existing imports)
export { IDENTITY_ENV_KEYS, SENSITIVE_ENV_FRAGMENTS, sanitiseEnv } from "@suaveplan/sandbox-core/env";
