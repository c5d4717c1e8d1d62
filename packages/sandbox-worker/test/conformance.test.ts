import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { WorkerEngine } from "../src/index.js";

// Runs the built worker entry (dist/worker-entry.js): `pnpm build` first (turbo's test task does).
runEngineConformance("worker", (limits) => new WorkerEngine(limits));
