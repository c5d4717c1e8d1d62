// Engine

// Environment (moved to @suaveplan/sandbox-core/env; re-exported here for existing imports)
export { IDENTITY_ENV_KEYS, SENSITIVE_ENV_FRAGMENTS, sanitiseEnv } from "@suaveplan/sandbox-core/env";
export type {
  ChildConfinement,
  ConfinedCommand,
  ProcessSpawner,
  SpawnEngineOptions,
} from "./internal/spawn-options.js";
// Child lifecycle
export {
  type ChildListener,
  type ChildOutcome,
  DEFAULT_EXIT_GRACE_MS,
  type RaceChildOptions,
  raceChild,
  type SpawnedChild,
} from "./spawn-engine/race-child.js";
export { confinedCapabilities, SPAWN_CAPABILITIES, SpawnEngine } from "./spawn-engine/spawn-engine.js";
