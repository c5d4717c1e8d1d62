export {
  CONFORMANCE_DEFAULTS,
  type EngineConformanceOptions,
} from "./conformance-checks.js";
export { type MakeEngine, runEngineConformance } from "./run-engine-conformance.js";
