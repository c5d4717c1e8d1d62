import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { QuickJsEngine } from "../src/index.js";

runEngineConformance("quickjs", (limits) => new QuickJsEngine(limits));
