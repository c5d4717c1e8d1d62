import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { IsolateEngine } from "../src/index.js";

// The real isolated-vm 5.x (devDependency); vitest runs this file with --no-node-snapshot.
runEngineConformance("isolate", (limits) => new IsolateEngine({ ...limits, process: "in-process" }));

// The same contract with the default: the isolates in helper processes (the built dist/isolate-helper.js).
runEngineConformance("isolate (helper process)", (limits) => new IsolateEngine(limits));
