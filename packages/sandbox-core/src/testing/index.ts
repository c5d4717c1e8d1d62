export {
  type CapabilityFlag,
  CONFORMANCE_CHECKS,
  CONFORMANCE_DEFAULTS,
  type ConformanceCheck,
  type ConformanceEnv,
  type EngineConformanceOptions,
  type ResolvedConformanceOptions,
} from "./conformance-checks.js";
export {
  type BombPace,
  expectedBombOutcome,
  MEMORY_BOMB_ROWS,
  type MemoryBombRow,
} from "./memory-bombs.js";
export { checkParityRow, PARITY_ROWS, type ParityRow } from "./parity-table.js";
export { type MakeEngine, runConformanceCheck, runEngineConformance } from "./run-engine-conformance.js";
