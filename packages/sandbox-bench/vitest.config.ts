import { createVitestConfig } from "../../tooling/vitest.preset.ts";

// The bench measures isolated-vm in this process, which needs Node's startup snapshot off on Node 20+.
export default createVitestConfig({ execArgv: ["--no-node-snapshot"] });
