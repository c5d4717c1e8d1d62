export { SandboxPool, type SandboxPoolOptions, type SandboxPoolStats } from "./pool.js";
