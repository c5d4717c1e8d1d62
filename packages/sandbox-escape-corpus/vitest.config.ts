import { createVitestConfig } from "../../tooling/vitest.preset.ts";

// Isolates run in this process (isolated-vm needs the startup snapshot off), so a host crash is
// this test process dying — the suite fails loudly instead of a helper process dying quietly.
export default createVitestConfig({ execArgv: ["--no-node-snapshot"], testTimeout: 120_000 });
