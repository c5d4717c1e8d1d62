import { defineConfig } from "tsup";
import { createTsupConfig } from "../../tooling/tsup.preset.ts";

export default defineConfig(
  createTsupConfig({
    index: "src/index.ts",
    "types/index": "src/types/index.ts",
    "error-codes/index": "src/error-codes/index.ts",
    "schemas/index": "src/schemas/index.ts",
    "telemetry/index": "src/telemetry/index.ts",
    "audit-logger/index": "src/audit-logger/index.ts",
    "resource-limiter/index": "src/resource-limiter/index.ts",
    "module-resolver/index": "src/module-resolver/index.ts",
    "code-transformer/index": "src/code-transformer/index.ts",
    "vm-engine/index": "src/vm-engine/index.ts",
    "worker-engine/index": "src/worker-engine/index.ts",
    "spawn-engine/index": "src/spawn-engine/index.ts",
    "runner/index": "src/runner/index.ts",
    "isolate-engine/index": "src/isolate-engine/index.ts",
    "quickjs-engine/index": "src/quickjs-engine/index.ts",
    "pool/index": "src/pool/index.ts",
    "result-streamer/index": "src/result-streamer/index.ts",
    "sandbox/index": "src/sandbox/index.ts",
    "ai/index": "src/ai/index.ts",
  }),
);
