export {
  type ChildListener,
  type ChildLogFrame,
  type ChildOutcome,
  DEFAULT_EXIT_GRACE_MS,
  type RaceChildOptions,
  raceChild,
  type SpawnedChild,
} from "./race-child.js";
export { type ProcessSpawner, SpawnEngine, type SpawnEngineOptions } from "./spawn-engine.js";
