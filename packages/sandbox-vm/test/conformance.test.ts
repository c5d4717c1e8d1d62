import { runEngineConformance } from "@suaveplan/sandbox-core/testing";
import { VmEngine } from "../src/index.js";

runEngineConformance("vm", (limits) => new VmEngine(limits));
