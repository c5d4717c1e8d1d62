import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { IsolateEngine } from "../src/index.js";

// The real isolated-vm 5.x (devDependency); vitest runs this file with --no-node-snapshot.
runEngineConformance("isolate", (limits) => new IsolateEngine(limits));
