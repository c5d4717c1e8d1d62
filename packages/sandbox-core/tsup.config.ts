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
    "result-streamer/index": "src/result-streamer/index.ts",
    "render/index": "src/render/index.ts",
    "pool/index": "src/pool/index.ts",
    "testing/index": "src/testing/index.ts",
    "guest-script/index": "src/guest-script/index.ts",
    "env/index": "src/env/index.ts",
    "worker-memory/index": "src/worker-memory/index.ts",
    "spares/index": "src/spares/index.ts",
  }),
);
