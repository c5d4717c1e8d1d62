export { byteLength, LogCollector, truncateOutput, truncationSentinel } from "./output-budget.js";
