import { createVitestConfig } from "../../tooling/vitest.preset.ts";

export default createVitestConfig();
