import { createVitestConfig } from "../../tooling/vitest.preset.ts";

// The isolate engine (isolated-vm) needs Node's startup snapshot off on Node 20+.
export default createVitestConfig({ execArgv: ["--no-node-snapshot"] });
