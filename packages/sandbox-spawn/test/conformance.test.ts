import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { SpawnEngine } from "../src/index.js";

// Real child processes running the built runner (`pnpm build` first; turbo's test task does).
runEngineConformance("spawn", (limits) => new SpawnEngine(limits));
