import { createVitestConfig } from "../../tooling/vitest.preset.ts";

// isolated-vm needs Node's startup snapshot off on Node 20+ (see README).
export default createVitestConfig({ execArgv: ["--no-node-snapshot"] });
