export {
  DEFAULT_MAX_SPARES,
  DEMAND_WINDOW_MS,
  MAX_SPARES_CAP,
  parseMaxSpares,
  SpareDemand,
  type SpareDemandOptions,
} from "./spare-demand.js";
export { type SpareHooks, SparePool, type SparePoolOptions } from "./spare-pool.js";
