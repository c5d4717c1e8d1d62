export { byteLength, LogCollector, truncateOutput, truncationSentinel } from "./output-budget.js";
export { ResourceLimiter, type ResourceLimiterOptions } from "./resource-limiter.js";
