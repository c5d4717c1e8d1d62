import { createVitestConfig } from "../../tooling/vitest.preset.ts";

// Blocks run as child processes of this Node; some (CLI bench-free runs, all engines) take seconds.
export default createVitestConfig({ testTimeout: 120_000 });
