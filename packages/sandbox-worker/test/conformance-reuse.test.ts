import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { WorkerEngine } from "../src/index.js";

// The reuse tier holds to the same table as single-use workers: every run on a
// long-lived worker, each in a fresh context (`pnpm build` first, as for conformance.test.ts).
runEngineConformance("worker", (limits) => new WorkerEngine({ ...limits, reuse: { workers: 2 } }));
